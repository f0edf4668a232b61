"""The summary of an `eval answers` run: per system, means and medians over its rows,
the origin post's figures (returned, among the sources, cited, its place), and each
system's ratio to the last (the bare model)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from codeweaver_eval.answers_eval import VERDICTS


def _mean(values: Sequence[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def _origin_summary(rows: Sequence[dict[str, Any]], name: str) -> dict[str, Any]:
    """Counts and rates of the origin checks; None for a system that retrieves nothing.

    Every question with an origin counts, so an answer that failed counts as a miss.
    """
    runs = [
        r["systems"][name]
        for r in rows
        if r.get("origin") is not None and name in r.get("systems", {})
    ]
    queries = [r["max_query_chars"] for r in runs if r.get("max_query_chars") is not None]
    summary: dict[str, Any] = {"max_query_chars": max(queries, default=None)}
    checked = any(r.get("cites_origin") is not None for r in runs)
    for key in ("origin_served", "origin_found", "cites_origin"):
        count = sum(1 for r in runs if r.get(key)) if checked else None
        summary[key] = count
        summary[key + "_rate"] = round(count / len(runs), 4) if count is not None else None
    ranks = [r["origin_rank"] for r in runs if r.get("origin_rank") is not None]
    # Over the questions whose post came back at all: how high the search put it.
    summary["origin_rank_median"] = statistics.median(ranks) if ranks else None
    summary["origin_rank_first"] = sum(1 for rank in ranks if rank == 1) if checked else None
    return summary


def _missing_summary(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Answers whose code uses an API missing at the installed versions, and their share."""
    checked = [r["missing_apis"] for r in runs if r.get("missing_apis") is not None]
    count = sum(1 for names in checked if names)
    return {
        "answers_with_missing_api": count if checked else None,
        "missing_api_rate": round(count / len(checked), 4) if checked else None,
    }


def summarise(rows: Sequence[dict[str, Any]], systems: Sequence[str]) -> dict[str, Any]:
    """Per system: means and medians over the rows, and each system's ratio to the last."""
    summary: dict[str, Any] = {"questions": len(rows), "systems": {}}
    for name in systems:
        runs = [r["systems"][name] for r in rows if name in r.get("systems", {})]
        recalls = [r["recall"] for r in runs if r.get("recall") is not None]
        verdicts = Counter(r["verdict"] for r in runs if r.get("verdict"))
        cases = Counter(r.get("plan_case") for r in runs if r.get("plan_case"))
        summary["systems"][name] = {
            "answers": len(runs),
            "errors": sum(1 for r in runs if r.get("error")),
            "identifier_recall": _mean(recalls),
            "questions_with_identifiers": len(recalls),
            "median_seconds": round(statistics.median(s), 2)
            if (s := [r["seconds"] for r in runs])
            else None,
            "mean_seconds": _mean([r["seconds"] for r in runs]),
            "model_calls": _mean([r["calls"] for r in runs]),
            "prompt_tokens": _mean([r["prompt_tokens"] for r in runs]),
            "completion_tokens": _mean([r["completion_tokens"] for r in runs]),
            "drafts": _mean([r["drafts"] for r in runs]),
            "warnings": sum(r["warnings"] for r in runs),
            "declined": cases.get("too_many", 0),
            "split": cases.get("multiple_questions", 0),
            "sources_cited": _mean([r["sources_cited"] for r in runs]),
            "answers_citing": sum(1 for r in runs if r["sources_cited"]),
            "in_question_language": sum(1 for r in runs if r.get("in_question_language", True)),
            "searched_in_english": sum(1 for r in runs if r.get("searched_in_english")),
            "verdicts": {v: verdicts.get(v, 0) for v in VERDICTS} if verdicts else None,
            **_missing_summary(runs),
            **_origin_summary(rows, name),
        }
    if len(systems) >= 2:
        base = summary["systems"][systems[-1]]
        for name in systems[:-1]:
            mine = summary["systems"][name]
            summary["systems"][name]["ratio_to_" + systems[-1]] = {
                key: round(mine[key] / base[key], 2) if mine[key] and base[key] else None
                for key in ("median_seconds", "model_calls", "prompt_tokens")
            }
    return summary
