"""The web page at `/` and its files under `/static`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).parent.parent / "static"

# The page loads only its own script and style; nothing inline runs.
_PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

router = APIRouter(include_in_schema=False)


@router.get("/")
async def index() -> FileResponse:
    return FileResponse(STATIC / "index.html", headers=_PAGE_HEADERS)


class RevalidatedStatic(StaticFiles):
    """The page's modules must never mix versions after an upgrade: revalidate each load."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = "no-cache"
        return response


def static_files() -> RevalidatedStatic:
    """What `create_app` mounts at `/static` (a router cannot carry a mount)."""
    return RevalidatedStatic(directory=STATIC)
