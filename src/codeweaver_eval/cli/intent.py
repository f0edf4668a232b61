"""`codeweaver eval intent`: the pipeline's intent rules, or the chat model, on labelled
questions."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from codeweaver_eval.cli.common import (
    FileOpt,
    JsonOpt,
    LimitOpt,
    ModelOpt,
    load,
    model_deps,
    print_report,
    run_with_progress,
)


class IntentBy(StrEnum):
    rules = "rules"
    model = "model"


def eval_intent(
    file: FileOpt,
    as_json: JsonOpt = False,
    limit: LimitOpt = None,
    model: ModelOpt = None,
    by: Annotated[
        IntentBy, typer.Option("--by", help="The pipeline's rules, or the chat model.")
    ] = IntentBy.rules,
) -> None:
    """Intent accuracy and per-class precision/recall (StackEval format)."""
    from codeweaver.agent.rules.intent import rule_intent
    from codeweaver_eval.datasets import load_intent_examples
    from codeweaver_eval.intent import predict_intent
    from codeweaver_eval.runners import evaluate_intent

    examples = load(load_intent_examples, file, limit)
    deps = model_deps(model) if by is IntentBy.model else None

    async def classify(question: str) -> tuple[str, bool]:
        if deps is None:
            return rule_intent(question), False
        result = await predict_intent(deps.llm, question)
        return result.value.intent, not result.ok

    report = run_with_progress(
        lambda progress: evaluate_intent(examples, classify, on_progress=progress),
        len(examples),
        as_json,
    )
    who = deps.model_name if deps else "rules"
    print_report(
        f"intent on {file} ({who})",
        report.to_dict(),
        [("examples", "total"), ("accuracy", "accuracy"), ("fell back to default", "fallbacks")],
        as_json,
    )
