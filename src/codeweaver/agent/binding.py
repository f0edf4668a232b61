"""How both graphs turn a node function `(state, deps)` into a LangGraph node."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from codeweaver.agent.deps import Deps
from codeweaver.agent.steps import label_steps

S = TypeVar("S")

Node = Callable[[S, Deps], Awaitable[dict[str, Any]]]


def node_name(fn: Callable[..., Any]) -> str:
    """The function's name, also through `functools.partial`: nodes are named after it."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return str(getattr(fn, "__name__", type(fn).__name__))


def bind(fn: Node[S], deps: Deps) -> Any:
    """A graph node closing over the dependencies; a worker's steps get its label.

    Typed `Any`: LangGraph's `add_node` overloads expect a protocol with a parameter
    named `state`, which a generic callable type cannot express.
    """

    async def node(state: S) -> dict[str, Any]:
        return label_steps(state, await fn(state, deps))  # type: ignore[arg-type]

    node.__name__ = node_name(fn)
    return node
