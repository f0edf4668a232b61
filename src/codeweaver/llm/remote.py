"""Is an OpenAI-compatible model server there, what does it serve, how many answers at once?

`codeweaver model serve` answers `GET /codeweaver/model` (beside `/v1`) with its model
and concurrency; other servers (vLLM, Ollama, LM Studio) are asked the standard
`GET {base}/models` and report no concurrency.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx

# The route `codeweaver model serve` adds beside `/v1` (see `llm/model_server.py`).
INFO_PATH = "/codeweaver/model"


@dataclass(frozen=True)
class ModelServerInfo:
    """What a probe found. `reachable`: an OpenAI-compatible server answered with its
    models; `error`: why not, in a few words (never a key or the URL)."""

    reachable: bool
    models: list[str] = field(default_factory=list)
    concurrency: int | None = None
    error: str | None = None


def _root(base_url: str) -> str:
    base = base_url.rstrip("/")
    return base.removesuffix("/v1")


def _headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _refused(response: httpx.Response) -> ModelServerInfo | None:
    if response.status_code in (401, 403):
        return ModelServerInfo(
            reachable=False,
            error=f"HTTP {response.status_code}: the server wants a valid key (OPENAI_API_KEY)",
        )
    return None


def _ours(response: httpx.Response) -> ModelServerInfo | None:
    """The info route of `codeweaver model serve`, or None when the server is another."""
    if (refused := _refused(response)) is not None:
        return refused
    if response.status_code != 200:
        return None
    body = _json(response)
    model, concurrency = body.get("model"), body.get("concurrency")
    if not isinstance(model, str) or not isinstance(concurrency, int):
        return None
    # Its /v1/models waits behind the completion being computed: the route says the same.
    return ModelServerInfo(reachable=True, models=[model], concurrency=concurrency)


def _listed(response: httpx.Response) -> ModelServerInfo:
    if (refused := _refused(response)) is not None:
        return refused
    if response.status_code != 200:
        return ModelServerInfo(
            reachable=False, error=f"HTTP {response.status_code} from GET /models"
        )
    data = _json(response).get("data")
    if not isinstance(data, list):
        return ModelServerInfo(reachable=False, error="GET /models gave no model list")
    ids = [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]
    return ModelServerInfo(reachable=True, models=ids)


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _failed(exc: Exception, timeout: float) -> ModelServerInfo:
    if isinstance(exc, httpx.TimeoutException):
        reason = f"no answer within {timeout:g} s"
    elif isinstance(exc, httpx.ConnectError):
        reason = "cannot connect (nothing listening, or the host is unknown)"
    elif isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        reason = "not a valid http(s) URL"
    else:
        reason = f"network error ({type(exc).__name__})"
    return ModelServerInfo(reachable=False, error=reason)


def probe_model_server(
    base_url: str, timeout: float = 2.0, *, api_key: str | None = None
) -> ModelServerInfo:
    """Probe the server at `base_url` (e.g. `http://127.0.0.1:8001/v1`); never raises."""
    try:
        with httpx.Client(timeout=timeout, headers=_headers(api_key)) as client:
            found = _ours(client.get(_root(base_url) + INFO_PATH))
            if found is not None:
                return found
            return _listed(client.get(base_url.rstrip("/") + "/models"))
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        return _failed(exc, timeout)


async def aprobe_model_server(
    base_url: str, timeout: float = 2.0, *, api_key: str | None = None
) -> ModelServerInfo:
    """`probe_model_server` for the event loop."""
    try:
        async with httpx.AsyncClient(timeout=timeout, headers=_headers(api_key)) as client:
            found = _ours(await client.get(_root(base_url) + INFO_PATH))
            if found is not None:
                return found
            return _listed(await client.get(base_url.rstrip("/") + "/models"))
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        return _failed(exc, timeout)
