"""Graph state, its value types and reducers — the one place they are defined.

The values sources and stores share with the graph (`SearchResult`, `Intent`, `Step`)
are defined in `codeweaver.vocabulary`, which imports nothing of the package.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, Required

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

# typing_extensions: pydantic (LangGraph Studio's schema pages) rejects typing.TypedDict on 3.11.
from typing_extensions import TypedDict

from codeweaver import vocabulary as _vocabulary

# The values every layer shares live below the agent; named here for the graph's modules.
Intent = _vocabulary.Intent
StepKind = _vocabulary.StepKind
SearchResult = _vocabulary.SearchResult
Step = _vocabulary.Step

RESET_TOKEN: dict[str, str] = {"__token__": "__RESET_MULTI_ANS__"}

Route = Literal["simple", "history_required", "rag_required"]
PlanCase = Literal["single_topic", "multiple_questions", "too_many"]
QuestionType = Literal["clarification", "new_topic", "independent"]
RefineStrategy = Literal["MORE_SPECIFIC", "MORE_GENERAL", "TRANSLATE"]
WebFallback = Literal["none", "pending", "done"]


class MultiAnswer(TypedDict, total=False):
    index: int
    question: str
    answer: str
    sources: list[SearchResult]
    cache_key: str  # the worker's canonical question
    code_findings: list[dict[str, Any]]  # what its code uses that is not installed


class CachedAnswer(TypedDict, total=False):
    """A cache hit, as `check_cache` found it for `return_cached_answer`.

    `check_cache` writes every key; not total because the reader takes `or {}`.
    """

    answer: str
    sources: list[SearchResult]
    model: str


class BestDraft(TypedDict):
    """The best draft so far of a turn whose check failed: returned if no rewrite passes."""

    answer: str
    rank: list[int]  # `GroundingReport.rank()`: lower is better
    warning: str


class UnsupportedClaim(TypedDict):
    claim: str
    citations: list[int]
    outcome: str
    reason: str


class GroundingDetails(TypedDict):
    """`GroundingReport.to_dict()`: the last check of the turn, also a step's data."""

    passed: bool
    claims: int
    contradictions: int
    citations_removed: int
    unsupported: list[UnsupportedClaim]
    unknown_citations: list[int]
    answers_question: bool
    asked_model: bool


def is_reset(item: object) -> bool:
    return isinstance(item, dict) and item.get("__token__") == RESET_TOKEN["__token__"]


def append_or_reset(left: list[Any] | None, right: list[Any] | None) -> list[Any]:
    """Append `right` to `left`, unless `right` starts with the reset token: then replace.

    A checkpointed thread keeps every channel between turns; the first node of a turn
    sends the token so one turn's steps and answers never leak into the next.
    """
    left = list(left or [])
    right = list(right or [])
    kept = [item for item in right if not is_reset(item)]
    if right and is_reset(right[0]):
        return kept
    return left + kept


def reset(*items: Any) -> list[Any]:
    """An update that clears a resettable channel and then holds `items`."""
    return [RESET_TOKEN, *items]


def new_turn(*steps: Step) -> dict[str, Any]:
    """The update of a turn's first node: clear what the thread's previous turn left.

    A checkpointed thread keeps every channel between turns, so one turn's results,
    answers and drafts must never be read by the next.
    """
    return {
        "multi_answers": reset(),
        "intermediate_steps": reset(*steps),
        "search_results": reset(),
        "filtered_results": [],
        "cited_sources": [],
        "refinement_count": 0,
        "refine_strategy": None,
        "cached_result": None,
        "question_type": None,
        "search_query": "",
        "is_worker": False,
        "original_question": None,
        "web_fallback": "none",
        "answer_attempt": 0,
        "answer_failed": False,
        "answer_feedback": None,
        "quoted_answer": "",
        "draft_language": "",
        "best_answer": None,
        "grounding": None,
        "code_feedback": None,
        "code_retry": False,
        "code_findings": [],
    }


class GraphState(TypedDict, total=False):
    """State of the outer graph and of each single-question worker.

    Every run starts with a question (`TurnInput` requires it; a worker gets its own), so
    nodes read `state["question"]`; every other channel may be unset.
    """

    messages: Annotated[list[AnyMessage], add_messages]
    question: Required[str]
    language: str
    # route_query: the route, and the message as written when it was rewritten
    route: Route
    original_question: str | None
    # create_plan; cleared to None by the runner's input
    plan_case: PlanCase | None
    sub_questions: list[str]
    # analyze_question
    question_type: QuestionType | None
    should_cache: bool
    canonical_question: str
    # check_cache
    cached_result: CachedAnswer | None
    # classify_intent / search
    intent: Intent
    search_query: str
    search_results: Annotated[list[SearchResult], append_or_reset]
    refinement_count: int
    refine_strategy: RefineStrategy | None
    needs_refinement: bool
    web_fallback: WebFallback
    # search_subgraph: the results the answer is written from
    filtered_results: list[SearchResult]
    # generate_answer: the sources its draft is numbered against, the API pages it cites
    # after them; check_answer grades the draft against these
    cited_sources: list[SearchResult]
    # answer
    answer: str
    # generate_answer: a source's answer to this very question, quoted as written after the
    # model's lead-in ("" for none); check_answer grades the lead-in, then appends it
    quoted_answer: str
    # generate_answer: the language the draft is written in when it is not the answer's
    # ("" for the same): check_answer grades it as written, then translates it
    draft_language: str
    sources: list[SearchResult]
    # generate_answer / check_answer: drafts, feedback and the best so far
    answer_attempt: int
    answer_failed: bool
    answer_feedback: str | None
    best_answer: BestDraft | None
    grounding: GroundingDetails | None
    # check_answer's code check: the facts for one rewrite, then what the final answer's
    # code still uses that is missing at the installed versions
    code_feedback: str | None
    code_retry: bool
    code_findings: list[dict[str, Any]]
    is_worker: bool
    worker_index: int
    multi_answers: Annotated[list[MultiAnswer], append_or_reset]
    intermediate_steps: Annotated[list[Step], append_or_reset]


class LibrarianState(GraphState, total=False):
    """The librarian's state: the pipeline's channels (one thread serves both modes)
    and the ReAct loop of one turn, reset by librarian_start."""

    # Past steps as {"thought", "tool", "input", "observation"}, oldest first.
    librarian_scratchpad: list[dict[str, str]]
    # The tool chosen by the last decision and its input; None once it has run.
    librarian_action: dict[str, str] | None
    librarian_steps: int  # decisions taken this turn
    librarian_invalid: int  # unusable model replies in a row


class TurnInput(TypedDict, total=False):
    """What the runner sends for one message: the question, the message (with removals
    of an interrupted turn's question), and the per-turn outputs cleared."""

    question: Required[str]
    messages: Annotated[list[AnyMessage], add_messages]
    canonical_question: str
    plan_case: PlanCase | None


class TurnOutput(TypedDict, total=False):
    """What a librarian run returns; `messages` too, so Studio shows the conversation."""

    messages: Annotated[list[AnyMessage], add_messages]
    answer: str
    sources: list[SearchResult]
    intermediate_steps: Annotated[list[Step], append_or_reset]
    code_findings: list[dict[str, Any]]


class PipelineOutput(TurnOutput, total=False):
    """What a pipeline run returns: the answer, and what the runner reports with it."""

    plan_case: PlanCase | None
    question_type: QuestionType | None
    code_findings: list[dict[str, Any]]
    canonical_question: str  # the cache key of a single question
    multi_answers: Annotated[list[MultiAnswer], append_or_reset]  # the keys of two


class SearchTask(TypedDict):
    """Payload of one `Send` to a search node."""

    query: str
    queries: NotRequired[list[str]]  # variations searched with `query` (multi-query)
    intent: Intent
    limit: int
    is_worker: bool
    worker_index: int


class SearchSubgraphInput(TypedDict, total=False):
    """What the search subgraph reads of the outer state, which always holds `question`."""

    is_worker: bool
    worker_index: int
    question: Required[str]
    canonical_question: str
    search_query: str
    search_results: list[SearchResult]


class SearchSubgraphOutput(TypedDict, total=False):
    filtered_results: list[SearchResult]
    intermediate_steps: Annotated[list[Step], append_or_reset]


class SearchSubgraphState(SearchSubgraphInput, SearchSubgraphOutput, total=False):
    """The search subgraph sees only what it needs and returns only its own steps."""
