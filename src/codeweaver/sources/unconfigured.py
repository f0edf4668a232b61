"""Online sources whose clients are not built yet: registered so `doctor` and the graph
report them honestly as skipped, never with invented results."""

from __future__ import annotations

from codeweaver.config import Settings
from codeweaver.sources.base import Source, UnconfiguredSource, register_source


@register_source("stackoverflow")
def _stackoverflow(settings: Settings) -> Source:
    return UnconfiguredSource("stackoverflow", "not configured")


@register_source("github")
def _github(settings: Settings) -> Source:
    return UnconfiguredSource("github", "not configured")
