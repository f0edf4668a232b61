"""The steps nodes report: made with `step`, labelled for a worker, streamed as they start."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from codeweaver.agent.state import Step, is_reset
from codeweaver.vocabulary import step as step  # re-exported: the nodes make steps


def label_steps(state: Mapping[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """Prefix a worker's steps with its question number (`Q1/…`) so progress reads well."""
    steps = update.get("intermediate_steps")
    if state.get("is_worker") and steps:
        label = f"Q{int(state.get('worker_index', 0)) + 1}/"
        update["intermediate_steps"] = [
            s if is_reset(s) or s["node"].startswith(label) else {**s, "node": label + s["node"]}
            for s in steps
        ]
    return update


def announce(state: Mapping[str, Any], item: Step) -> None:
    """Stream a step the moment it starts (e.g. a search), before the node returns.

    The node still returns the step in its update (the turn's record keeps it); the
    runner shows it once, by its id.
    """
    from langgraph.config import get_stream_writer

    labelled = label_steps(state, {"intermediate_steps": [item]})["intermediate_steps"][0]
    with contextlib.suppress(RuntimeError):  # outside a graph run (a node's unit test)
        get_stream_writer()({"step": labelled})
