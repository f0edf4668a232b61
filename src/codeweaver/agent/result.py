"""What a run gives back: its result, and the events streamed while it runs. Kept apart
from the runner so the CLI can show a result without importing the graph."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from codeweaver.vocabulary import SearchResult, Step, Usage


@dataclass(frozen=True)
class RunResult:
    thread_id: str
    question: str
    answer: str
    sources: list[SearchResult]
    steps: list[Step]
    plan_case: str | None
    question_type: str | None
    # The canonical questions the answer (or each part of it) may be cached under.
    cache_keys: tuple[str, ...] = ()
    # What the answer's code still uses that is missing at the installed versions.
    code_findings: tuple[dict[str, Any], ...] = ()
    # Every model call of the run, subgraphs included (none: a rule or the cache answered).
    usage: Usage = field(default_factory=Usage)

    def to_dict(self) -> dict[str, Any]:
        return {
            "thread_id": self.thread_id,
            "question": self.question,
            "answer": self.answer,
            "sources": [
                {"n": n, **{k: v for k, v in s.items() if k != "snippet"}}
                for n, s in enumerate(self.sources, 1)
            ],
            "plan_case": self.plan_case,
            "question_type": self.question_type,
            "code_findings": list(self.code_findings),
            "steps": self.steps,
            "usage": self.usage.to_dict(),
        }


@dataclass(frozen=True)
class RunEvent:
    kind: Literal["step", "token", "result"]
    step: Step | None = None
    text: str = ""
    node: str = ""
    result: RunResult | None = None
