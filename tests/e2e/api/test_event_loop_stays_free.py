"""A question that is slow to read never holds up the server's event loop.

A question of "How", 7,990 spaces and "x?" once took the rule-based planner seconds of
CPU on the event loop, and `/api/health` and every stream waited for it.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from codeweaver.llm.scripted import ScriptedChatModel
from tests.fakes import FakeSource, doc, make_deps
from tests.servers import running_app

PADDED = "How" + " " * 7990 + "x?"
SCRIPT: dict[str, object] = {
    "classify_intent": '{"intent": "learning"}',
    "generate_answer": "Use `x` [1].",
}
HEALTH_BUDGET = 0.5  # seconds; health answers in milliseconds when the loop is free


def test_health_answers_while_a_padded_question_is_planned(tmp_path: Path) -> None:
    deps, llm = make_deps(tmp_path, SCRIPT, sources=[FakeSource(results=[doc(1)])])
    deps.settings = deps.settings.model_copy(update={"api_rate_per_minute": 1000})
    assert isinstance(llm, ScriptedChatModel)
    replies: list[httpx.Response] = []
    with running_app(deps) as url:
        httpx.get(f"{url}/api/health", timeout=10)  # the app is up before timing starts

        def ask() -> None:
            replies.append(httpx.post(f"{url}/api/chat", json={"message": PADDED}, timeout=60))

        asker = threading.Thread(target=ask)
        asker.start()
        waits: list[float] = []
        while asker.is_alive():
            started = time.perf_counter()
            health = httpx.get(f"{url}/api/health", timeout=30)
            waits.append(time.perf_counter() - started)
            assert health.status_code == 200
            time.sleep(0.02)
        asker.join()
    assert replies and replies[0].status_code == 200, replies[0].text if replies else None
    steps = [s for s in replies[0].json()["steps"] if s["node"] == "create_plan"]
    assert steps, "the question went through the planner"
    assert waits, "health was asked while the question ran"
    assert max(waits) < HEALTH_BUDGET, f"health waited {max(waits):.2f}s"
