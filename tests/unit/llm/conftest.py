"""Fixtures shared by the model tests."""

from __future__ import annotations

import httpx
import httpx2
import pytest
import respx


@pytest.fixture
def openai_api(api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch) -> respx.MockRouter:
    """The recorded routes, for the `openai` client too: it sends through `httpx2`, which
    respx does not patch, so its transport hands each request to the same router."""

    def handle(_transport: object, request: httpx2.Request) -> httpx2.Response:
        mirrored = httpx.Request(
            request.method, str(request.url), headers=request.headers.raw, content=request.read()
        )
        response = api.handler(mirrored)
        return httpx2.Response(
            response.status_code, headers=response.headers.raw, content=response.read()
        )

    async def handle_async(transport: object, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        return handle(transport, request)

    monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", handle)
    monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", handle_async)
    return api
