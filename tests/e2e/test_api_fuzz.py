"""Property-based fuzzing of the whole HTTP API from its own OpenAPI schema.

Schemathesis generates valid and invalid requests for every operation and sends them to
a real loopback server with a scripted model: no response may be a 5xx, and each must
match what the schema documents (status code, content type, body).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from codeweaver.api.app import create_app
from codeweaver.config import Settings
from tests.fakes import FakeSource, doc, make_deps
from tests.servers import running_app

SCRIPT: dict[str, object] = {
    "classify_intent": '{"intent": "learning"}',
    "generate_answer": "Iterate over the file object [1].",
}
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def _schema() -> dict[str, Any]:
    """The schema the server publishes; building the app opens nothing."""
    return create_app(Settings(data_dir=Path(tempfile.gettempdir()) / "cw-fuzz")).openapi()


schema = schemathesis.openapi.from_dict(_schema())


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp: Path = tmp_path_factory.mktemp("fuzz")
    deps, _ = make_deps(tmp, SCRIPT, sources=[FakeSource(results=[doc(1)])])
    deps.settings = deps.settings.model_copy(
        update={"api_rate_per_minute": 1_000_000, "cache_enabled": False}
    )
    with running_app(deps) as url:
        yield url


@schema.parametrize()
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_server_error_and_every_response_as_documented(case: Any, base_url: str) -> None:
    case.call_and_validate(base_url=base_url, checks=CHECKS)
