"""`/api/health`: answers at once, also while the service starts."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, HTTPException, Request

from codeweaver.api.auth import TokenTable
from codeweaver.api.health import model_problem
from codeweaver.api.responses import HealthReport
from codeweaver.api.schemas import error_docs
from codeweaver.api.startup import ServiceStartup

router = APIRouter(tags=["service"])


@router.get(
    "/api/health",
    responses=error_docs(421),
    response_model=HealthReport,
    # Fields a report lacks (no model server, no token) stay absent rather than null.
    response_model_exclude_unset=True,
)
async def get_health(request: Request) -> dict[str, Any]:
    """Status (`starting` until the service is built); with a valid token (or none
    configured) also the model, sources, what is still being built, stores and queue,
    never a key's value. Answers at once, also while the service starts."""
    starting: ServiceStartup = request.app.state.starting
    health: dict[str, Any] = request.app.state.health
    tokens: TokenTable = request.app.state.tokens
    failed = starting.failure()
    problems = [
        p
        for p in (
            starting.store_problem,
            model_problem(health),
            f"the service could not start: {failed}" if failed is not None else None,
        )
        if p is not None
    ]
    status = "degraded" if problems else "ok" if starting.ready() else "starting"
    if tokens.required:
        try:
            tokens.authenticate(request)
        except HTTPException:
            return {"status": status}
    report = {**health, "status": status, "problems": problems}
    report["starting"] = None if starting.ready() else starting.phase
    report["building"] = await asyncio.to_thread(starting.building)
    return {**report, "queue": starting.queue.snapshot()}
