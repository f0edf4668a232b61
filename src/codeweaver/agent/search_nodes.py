"""The search nodes: one row each, read by the graph, the planner and the librarian.

A row says which sources serve the node (the first usable one answers), how many results
it asks for per intent, and what the librarian is told its tool does. Adding a source is
a `@register_source` (with its `SourceInfo`: MCP tool, live check, key) and, when it needs
a node of its own, one row here (or `add_search_node` from a plugin): never a branch in a
node. The other doors read this table's order of sources too (the MCP tools).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from codeweaver.vocabulary import Intent

ALL_INTENTS: Mapping[Intent, float] = {"debugging": 1.0, "learning": 1.0, "code_review": 1.0}


@dataclass(frozen=True)
class SearchNode:
    """One search node of the graph, which is also one tool of the librarian."""

    name: str  # the graph node and the librarian's tool, `search_<something>`
    sources: tuple[str, ...]  # candidate sources, in order of preference
    help: str  # what the librarian's tool does, and its input
    # Results asked for per intent, as a multiple of `results_per_source`; 0 means the
    # node does not run for that intent.
    share: Mapping[Intent, float] = field(default_factory=lambda: dict(ALL_INTENTS))

    def share_for(self, intent: Intent) -> float:
        return self.share.get(intent, 1.0)


# In fan-out order. The table is a dict so a plugin (or a test) adds a row by name.
SEARCH_NODES: dict[str, SearchNode] = {
    row.name: row
    for row in (
        SearchNode(
            "search_stackoverflow",
            ("stackoverflow",),
            "Stack Overflow questions and answers; input: a search query.",
            {"debugging": 2.0, "learning": 1.0, "code_review": 1.0},
        ),
        SearchNode(
            "search_github",
            ("github",),
            "code on GitHub; input: a search query.",
            {"debugging": 1.0, "learning": 1.0, "code_review": 1.5},
        ),
        # Known bugs answer errors and broken upgrades; they rarely explain or review code.
        SearchNode(
            "search_github_issues",
            ("github_issues",),
            "known bugs and their fixes in GitHub issues; input: an error message or API name.",
            {"debugging": 1.0, "learning": 0.0, "code_review": 0.0},
        ),
        # Tavily's docs search when a key is set, else the offline installed-package docs.
        SearchNode(
            "search_official_docs",
            ("tavily_docs", "installed_docs"),
            "official documentation; input: a search query.",
        ),
        # Python's own prose docs (tutorial, how-tos, FAQ, reference), where installed:
        # what the docstrings of the installed docs lack (how to loop over a file's lines).
        # Two sections at most: with five, the README question's prompt held five sections
        # (a configparser one among them) and no room was left for `open()`'s docstring.
        SearchNode(
            "search_python_docs",
            ("python_docs",),
            "Python's own documentation (tutorial, how-tos, FAQ, library and language "
            "reference prose) for the project's Python version; input: a search query.",
            {"debugging": 0.4, "learning": 0.4, "code_review": 0.4},
        ),
        # The docs of the JavaScript/TypeScript project's installed npm packages (README
        # sections, `.d.ts` API), skipped without node_modules. Every intent: the API of
        # the installed version explains it, shows its misuse and checks a review.
        SearchNode(
            "search_package_docs",
            ("npm_docs",),
            "the README and TypeScript API docs of the project's installed npm packages; "
            "input: a package, function or method name and what you want to do with it.",
        ),
        SearchNode("search_web", ("web",), "the web; input: a search query."),
        SearchNode(
            "search_knowledge_base",
            ("knowledge_base",),
            "the team's own documents; input: a search query.",
        ),
        # Your own code rarely answers "what is X?".
        SearchNode(
            "search_local_code",
            ("local_code",),
            "the user's own code; input: a search query.",
            {"debugging": 1.0, "learning": 0.0, "code_review": 1.5},
        ),
    )
}
# The node that always has an offline source (installed docs): the fan-out's fallback
# when no node runs for a question.
BASELINE_NODE = "search_official_docs"
# Web search is the fallback: it runs only when the fan-out found too few.
FALLBACK_NODE = "search_web"
MIN_DOCUMENTS = 3


def add_search_node(row: SearchNode) -> None:
    """Add (or replace) a search node; call it before the graph is built."""
    if not row.name.startswith("search_"):
        raise ValueError(f"a search node's name starts with `search_`: {row.name!r}")
    SEARCH_NODES[row.name] = row


def fanned_out_nodes() -> list[str]:
    """The nodes the fan-out may send a question to: every node but the fallback."""
    return [name for name in SEARCH_NODES if name != FALLBACK_NODE]
