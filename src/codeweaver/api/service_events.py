"""What the service streams for a turn (`ServiceEvent`), and how a run becomes those
events (`RunView`): its steps, the steps in words, the draft's tokens, a line when a
long wait goes on, then `done` with the turn as recorded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from codeweaver.agent.result import RunEvent, RunResult
from codeweaver.agent.runner import ANSWER_NODES
from codeweaver.api.render import render_answer
from codeweaver.memory.sessions import Turn
from codeweaver.presentation.progress import Progress, ProgressLine
from codeweaver.words.language import detect_language

EventKind = Literal["queue", "think", "act", "observe", "progress", "token", "done", "error"]
STEP_EVENTS = {"think": "think", "act": "act", "observe": "observe", "error": "observe"}


@dataclass(frozen=True)
class ServiceEvent:
    kind: EventKind
    data: dict[str, Any]


# What a turn yields (`ChatService._turn`): its waits, its run's events, None when the run
# starts and whenever a moment passes without news, and the turn as recorded, last.
TurnItem = ServiceEvent | RunEvent | Turn | None


@dataclass
class RunView:
    """Turns one turn's items into the service's events. `lines` are the progress lines
    said so far (`done` carries them); `heartbeat_seconds` is how long a run may go
    without news before a line says it is still writing."""

    question: str
    heartbeat_seconds: float
    lines: list[dict[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.language = detect_language(self.question)
        self.progress = Progress(self.language)
        self.answering = False
        self.words = 0
        self.news: float | None = None  # when the run last had news; None until it starts
        self.result: RunResult | None = None

    def events(self, item: TurnItem) -> list[ServiceEvent]:
        if isinstance(item, ServiceEvent):  # a wait before the run
            if item.kind == "progress":
                self.lines.append(item.data)
            return [item]
        if isinstance(item, Turn):
            return [*self._said(self.progress.finish()), self._done(item)]
        if item is None:
            return self._tick()
        self.news = time.monotonic()
        if item.kind == "step" and item.step is not None:
            said = self._said(self.progress.feed(item.step))
            node = str(item.step.get("node", "")).rsplit("/", 1)[-1]
            if self.answering and node in ANSWER_NODES:
                return said  # the answer's own closing step: `done` carries it
            step = dict(item.step)
            kind = STEP_EVENTS.get(str(step.get("kind")), "observe")
            step["error"] = step.get("kind") == "error"
            step["text"] = step.get("message", "")
            return [*said, ServiceEvent(kind, step)]  # type: ignore[arg-type]
        if item.kind == "token":
            self.answering = True
            self.words += len(item.text.split())
            return [ServiceEvent("token", {"text": item.text})]
        self.result = item.result
        return []

    def _tick(self) -> list[ServiceEvent]:
        """A moment without news: the searches that started together are said together,
        while they run, and a long silence is said to be the model writing."""
        now = time.monotonic()
        if self.news is None:  # the run starts now
            self.news = now
            return []
        said = self.progress.started()
        if now - self.news >= self.heartbeat_seconds:
            said += self.progress.still_writing(self.words)
            self.news = now
        return self._said(said)

    def _said(self, lines: list[ProgressLine]) -> list[ServiceEvent]:
        events = [ServiceEvent("progress", line.to_dict()) for line in lines]
        self.lines.extend(event.data for event in events)
        return events

    def _done(self, turn: Turn) -> ServiceEvent:
        result = self.result
        if result is None:
            raise RuntimeError("the run ended without an answer")
        return ServiceEvent(
            "done",
            {
                "language": self.language,
                "session_id": turn.session_id,
                "turn": turn.turn,
                "answer": turn.answer,
                "html": render_answer(turn.answer, len(turn.sources)),
                "sources": turn.sources,
                "plan_case": result.plan_case,
                "question_type": result.question_type,
                "code_findings": list(result.code_findings),
                "progress": self.lines,
                "steps": result.steps,
                # The run's model calls and tokens (a cached answer counts only what it
                # asked).
                "usage": result.usage.to_dict(),
            },
        )
