"""Held-out check of the installed docs: does an everyday how-to get the page that answers it?

Data: `tests/fixtures/howto/pandas_numpy_requests.jsonl`, 30 how-tos about pandas, NumPy
and requests with the API pages that answer them (`answers`: qualified names), written
before any measuring. Run it where CodeWeaver finds a project environment holding those
packages (a folder whose `.venv` it is, `--project DIR`, or `CODEWEAVER_PROJECT_PYTHON`).

Each question goes through the pipeline's own call: the query and its variations as the
search node gets them (`search_task`), each through `InstalledDocsSource.search` (the bars
applied) with the intent by rules and the pipeline's limit, the results merged as the node
merges them (`dedupe`). `--ranked` reads the ranked list without the bars instead.

Matching rule: a returned page answers the question when its qualified name, or one of its
aliases, is one of `answers`, or when it documents the same object: each answer is imported
in the project's environment (its interpreter, in a subprocess) and resolved to where it is
defined, `__module__` + `__qualname__` (a property's getter; a C method's class), so
`pandas.io.parsers.readers.read_csv` answers for `pandas.read_csv` and
`pandas.core.generic.NDFrame.to_csv` for `pandas.DataFrame.to_csv`. A page of the same
name elsewhere (`numpy.matlib.zeros` for `numpy.zeros`, `pandas.Index.astype` for
`pandas.DataFrame.astype`) does not answer.

Reported: answered (an answering page among those returned), nothing (no page at all),
wrong (pages returned, none answering), and whether the dense vectors were used.

    .venv/bin/python -m codeweaver_eval.howto_retrieval [--ranked] [--json] [--wait]

`--choose-bar CONALA` shows how the installed docs' bar (`ranking.ORDER_BAR`,
`RELEVANCE_FLOOR`) was chosen: CodeWeaver's own environment ranks CoNaLa's even half (all
vectors), each candidate labelled by `eval retrieval`'s hit rule (a builtin type's page,
zeroed by design, never counts), and every pair is printed with recall@5 and three
precision figures: questions given pages but no right one, right pages among those
returned, right first pages. The bar is the pair of highest recall whose precision
figures are all at least those of the relevance bar at 0.13 (the first line).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codeweaver.agent.nodes.search import dedupe, search_task
from codeweaver.agent.rules.intent import rule_intent
from codeweaver.agent.rules.queries import search_form
from codeweaver.agent.state import GraphState
from codeweaver.config import Settings
from codeweaver.sources.installed_docs import InstalledDocsSource, find_project_for, source_for
from codeweaver.vocabulary import SearchResult
from codeweaver_eval.datasets import read_jsonl
from codeweaver_eval.repository import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "howto" / "pandas_numpy_requests.jsonl"
TIMEOUT = 120.0

#: Runs in the project's interpreter: where each named object is defined (or null).
RESOLVE = r"""
import importlib, json, sys
out = {}
for name in json.loads(sys.argv[1]):
    parts, obj = name.split("."), None
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            obj = None
        break
    target = getattr(obj, "fget", None) or obj
    module = getattr(target, "__module__", None)
    if not isinstance(module, str):
        module = getattr(getattr(target, "__objclass__", None), "__module__", None)
    qualname = getattr(target, "__qualname__", None)
    ok = isinstance(module, str) and isinstance(qualname, str)
    out[name] = module + "." + qualname if ok else None
print(json.dumps(out))
"""


@dataclass(frozen=True)
class HowTo:
    id: str
    question: str
    answers: tuple[str, ...]


@dataclass(frozen=True)
class Outcome:
    howto: HowTo
    queries: tuple[str, ...]
    returned: tuple[tuple[str, float | None], ...]  # (documented name, score)
    answering: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.howto.id,
            "question": self.howto.question,
            "queries": list(self.queries),
            "returned": [{"name": n, "score": s} for n, s in self.returned],
            "answering": list(self.answering),
        }


def load(path: Path) -> list[HowTo]:
    return [
        HowTo(str(row["id"]), str(row["question"]), tuple(row["answers"]))
        for _, row in read_jsonl(path)
    ]


def resolve_answers(python: Path, names: Sequence[str]) -> dict[str, str | None]:
    """Where each answer is defined in the project's environment (`RESOLVE`)."""
    with tempfile.TemporaryDirectory() as empty:
        done = subprocess.run(
            [str(python), "-I", "-c", RESOLVE, json.dumps(sorted(set(names)))],
            capture_output=True, text=True, timeout=TIMEOUT, cwd=empty, check=True,
        )  # fmt: skip
    found: dict[str, str | None] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def answers_of(howto: HowTo, defined: Mapping[str, str | None]) -> frozenset[str]:
    """The names a page may carry to answer `howto`: the answers and where they live."""
    return frozenset(howto.answers) | {d for a in howto.answers if (d := defined.get(a))}


def documented(result: SearchResult) -> str:
    """`python:pandas.read_csv@2.2.3` -> `pandas.read_csv`."""
    return (result.get("reference") or "").partition(":")[2].rpartition("@")[0]


def pipeline_queries(question: str) -> list[str]:
    """The queries the search node runs for a first round (`search_task`)."""
    state: GraphState = {"question": question, "search_query": search_form(question)}
    return list(search_task(state, 1).get("queries") or [])


async def ask(
    source: InstalledDocsSource, howto: HowTo, limit: int, *, ranked: bool
) -> tuple[list[str], list[SearchResult]]:
    queries = pipeline_queries(howto.question)
    intent = rule_intent(howto.question)
    call = source.ranked if ranked else source.search
    found = [r for q in queries for r in await call(q, intent, limit)]
    return queries, dedupe(found)


def measure(
    source: InstalledDocsSource,
    howtos: Sequence[HowTo],
    defined: Mapping[str, str | None],
    limit: int,
    *,
    ranked: bool = False,
) -> list[Outcome]:
    loaded = source._loaded
    aliases = {e.name: e.aliases for e in loaded.entries} if loaded is not None else {}
    out: list[Outcome] = []
    for howto in howtos:
        queries, results = asyncio.run(ask(source, howto, limit, ranked=ranked))
        wanted = answers_of(howto, defined)
        names = [documented(r) for r in results]
        answering = [n for n in names if wanted & {n, *aliases.get(n, ())}]
        returned = tuple((n, r.get("score")) for n, r in zip(names, results, strict=True))
        out.append(Outcome(howto, tuple(queries), returned, tuple(answering)))
    return out


def summary(outcomes: Sequence[Outcome]) -> dict[str, int]:
    answered = sum(1 for o in outcomes if o.answering)
    nothing = sum(1 for o in outcomes if not o.returned)
    return {
        "questions": len(outcomes),
        "answered": answered,
        "nothing": nothing,
        "wrong": len(outcomes) - answered - nothing,
    }


Row = tuple[float, float, bool, bool]  # (estimate, relevance, asked, hit)


def bar_figures(ranked: Sequence[Sequence[Row]], keep: Callable[[Row], bool]) -> dict[str, float]:
    """recall@5 and the precision figures of a bar over ranked candidates (`choose_bar`)."""
    found = answered = wrong = hits = returned = first = 0
    for rows in ranked:
        kept = [r for r in rows if keep(r)][:5]
        if not kept:
            continue
        right = sum(r[3] for r in kept)
        answered, returned, hits = answered + 1, returned + len(kept), hits + right
        first += kept[0][3]
        found, wrong = found + bool(right), wrong + (not right)
    n, given = max(len(ranked), 1), max(answered, 1)
    return {"recall_at_5": found / n, "wrong_page_share": wrong / given,
            "right_pages": hits / max(returned, 1), "right_first": first / given}  # fmt: skip


def _pair_bar(order: float, floor: float) -> Callable[[Row], bool]:
    """`ranking.passes` with other numbers."""
    return lambda row: row[2] or (row[0] >= order and row[1] >= floor)


def choose_bar(conala: Path) -> None:
    from codeweaver.sources.installed_docs import ranking
    from codeweaver_eval.retrieval_eval import load_questions, question_uses
    from codeweaver_eval.retrieval_names import is_hit

    source = source_for(Settings(), None)
    source.ensure_index()  # and every vector
    ranker = source._ranker_for(source._ensure(None, retry=True), None, wait=True)
    catalogue = source.catalogue()
    known = frozenset(name.partition(".")[0] for name in catalogue)
    ranked: list[list[Row]] = []
    for question in load_questions(conala, part="even"):
        uses = question_uses(question, known)
        rows: list[Row] = []
        for c in ranker.rank(question.intent):
            package = catalogue.get(c.entry.name)
            hit = package is not None and is_hit(uses, c.entry.name, package == "python")
            rows.append(
                (c.order, c.score, c.asked, hit and c.entry.name not in ranking._VALUE_TYPES)
            )
        ranked.append(rows)
    old = bar_figures(ranked, lambda r: r[1] >= ranking.SCORE_THRESHOLD)
    _say(json.dumps({"relevance >= 0.13": old}))
    for order in (0.05, 0.07, 0.08, 0.09, 0.1, 0.12, 0.15, 0.2):
        for floor in (0.005, 0.01, 0.02, 0.03, 0.05):
            new = bar_figures(ranked, _pair_bar(order, floor))
            kept = new["wrong_page_share"] <= old["wrong_page_share"] and all(
                new[k] >= old[k] for k in ("right_pages", "right_first")
            )
            _say(json.dumps({"order": order, "floor": floor, "keeps_precision": kept, **new}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=FIXTURE)
    parser.add_argument("--choose-bar", type=Path, metavar="CONALA", help="see the docstring")
    parser.add_argument("--ranked", action="store_true", help="the ranked list, no bars")
    parser.add_argument("--wait", action="store_true", help="embed missing vectors first")
    parser.add_argument("--json", action="store_true", help="one JSON line per question")
    args = parser.parse_args()
    if args.choose_bar is not None:
        choose_bar(args.choose_bar)
        return
    settings = Settings()
    project = find_project_for(settings)
    if project.env is None or project.env.own:
        raise SystemExit(f"no project environment here: {project.reason or 'our own'}")
    source = source_for(settings, project.env)
    source._recheck_interval = float("inf")  # one index for the whole run
    if args.wait:
        source.ensure_index()  # and every vector
    else:
        source._ensure(None, retry=True)  # the index; searches use what vectors there are
    howtos = load(args.file)
    defined = resolve_answers(project.env.python, [a for h in howtos for a in h.answers])
    outcomes = measure(source, howtos, defined, settings.results_per_source, ranked=args.ranked)
    ranker = source._ranker
    vectors = ranker is not None and ranker.vectors is not None
    totals = {**summary(outcomes), "vectors": vectors, "ranked": args.ranked}
    if args.json:
        for outcome in outcomes:
            _say(json.dumps(outcome.to_dict(), ensure_ascii=False))
        _say(json.dumps({"summary": totals}))
        return
    for o in outcomes:
        mark = "ok " if o.answering else ("-- " if not o.returned else "XX ")
        shown = ", ".join(f"{n} {s}" for n, s in o.returned)
        _say(f"{mark}{o.howto.id} {o.howto.question}\n     {shown or 'nothing'}")
    _say(json.dumps(totals))


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")


if __name__ == "__main__":
    main()
