"""`codeweaver eval code`: the answers' code check alone, on a JSONL file of code blocks."""

from __future__ import annotations

import json

import typer

from codeweaver_eval.cli.common import FileOpt, JsonOpt, LimitOpt, number
from codeweaver_eval.cli.progress import progress


def eval_code(file: FileOpt, as_json: JsonOpt = False, limit: LimitOpt = None) -> None:
    """Flags of the code check (APIs missing at the installed versions, wrong keywords).

    Lines are `{"id", "language", "code", "missing": [names]}` (Python, JavaScript or
    TypeScript); the check uses the project's environment and `node_modules`, as `ask`
    does. `--json` prints one line per item, then
    `{"summary": …}`.
    """
    from codeweaver.config import Settings
    from codeweaver.factory import code_api, code_npm
    from codeweaver_eval.code_eval import evaluate_code, load_items
    from codeweaver_eval.datasets import DatasetError

    try:
        items = load_items(file, limit)
    except DatasetError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    settings = Settings()
    api, where = code_api(settings)
    npm = code_npm(settings)
    if npm is not None:
        where += f" and {npm.node_modules}"
    with progress(len(items), quiet=as_json) as report_progress:
        report = evaluate_code(items, api, report_progress, npm)
    summary = report.to_dict()
    if as_json:
        for result in report.items:
            typer.echo(json.dumps(result.to_dict(), ensure_ascii=False))
        typer.echo(json.dumps({"summary": summary, "environment": where}))
        return
    typer.echo(f"code check on {file}, against {where}")
    for result in report.items:
        if result.report.findings or result.item.missing:
            flags = ", ".join(sorted(result.flagged)) or "nothing"
            wrong = (
                f"  (false: {', '.join(sorted(result.false_flags))})" if result.false_flags else ""
            )
            typer.echo(f"  {result.item.id}: flagged {flags}{wrong}")
    for label, key in [
        ("items checked", "items"),
        ("parsed", "parsed"),
        ("expected names", "expected"),
        ("recall", "recall"),
        ("flags", "flags"),
        ("precision", "precision"),
        ("false flags", "false_flags"),
        ("items with a false flag", "false_flag_rate"),
        ("uses checked", "uses_checked"),
        ("seconds", "seconds"),
    ]:
        value = summary[key]
        typer.echo(f"  {label}: {'—' if value is None else number(value)}")
