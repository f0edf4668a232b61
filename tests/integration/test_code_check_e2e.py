"""The code check end to end on the embedded model, in a project whose `.venv` has pandas
2.2.3 and NumPy 2.1.3: an answer never leaves `DataFrame.append` or `np.float` in its code
without a note, and `code_findings` says so.

Slow: it makes the project's environment (pip, from the package index) and asks the real
model twice, each answer possibly rewritten once.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from codeweaver.agent.runner import Assistant
from codeweaver.codecheck.answers import check_answer_code
from codeweaver.config import Settings
from codeweaver.factory import build_deps, open_assistant

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]

PACKAGES = ["pandas==2.2.3", "numpy==2.1.3"]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    subprocess.run([sys.executable, "-m", "venv", str(root / ".venv")], check=True)
    pip = [str(root / ".venv" / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--disable-pip-version-check", *PACKAGES], check=True, timeout=600)
    return root


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def assistant(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Assistant]:
    # No sources: the answers come from the model alone, the check is what is tested.
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("data"),
        project=project,
        enabled_sources="none",
        cache_enabled=False,
    )
    async with open_assistant(build_deps(settings)) as opened:
        yield opened


async def _asked(assistant: Assistant, question: str, name: str) -> None:
    result = await assistant.ask(question, f"code-{name}")
    checks = [s for s in result.steps if str(s["message"]).startswith("code check:")]
    assert checks and checks[-1]["data"]["checked"] > 0, result.steps  # the check ran
    checker = assistant.deps.code_checker
    assert checker is not None
    left = {f.finding.name for f in check_answer_code(result.answer, checker.api()).findings}
    reported = {f["name"] for f in result.code_findings}
    assert left == reported, (result.answer, result.code_findings)
    if name in left:  # still in the final code: noted under its block
        assert f"> ⚠ `{name}` does not exist in" in result.answer, result.answer


async def test_dataframe_append_is_never_left_without_a_note(assistant: Assistant) -> None:
    await _asked(
        assistant, "How do I append a row to a pandas DataFrame?", "pandas.DataFrame.append"
    )


async def test_np_float_is_never_left_without_a_note(assistant: Assistant) -> None:
    await _asked(assistant, "How do I convert a numpy array to float?", "numpy.float")
