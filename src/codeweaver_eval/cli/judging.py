"""`codeweaver eval blind`, `unblind` and `rubric`: answers judged blind by reading.

`blind` writes the file a judge reads (two answers per question in a seeded random order,
what gives a system away removed) and its key; `rubric` prints what the judge is told;
`unblind` counts the judge's verdicts per system with the key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from codeweaver_eval.cli.common import JsonOpt

# Fewer judged items than this are too few to draw a conclusion from (docs/measurements.md).
MIN_JUDGED = 20


def _refuse(message: object) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def _two(systems: str) -> tuple[str, str]:
    names = [name.strip() for name in systems.split(",")]
    if len(names) != 2 or not all(names):
        raise _refuse(f"--systems takes two names separated by a comma, not {systems!r}")
    return names[0], names[1]


def eval_blind(
    rows: Annotated[Path, typer.Argument(help="Rows of `codeweaver eval answers --out` (JSONL).")],
    data: Annotated[
        Path,
        typer.Argument(
            help="The data set the questions came from, holding the reference answers "
            "(StackEval JSONL, a Korean file keeping StackEval's questionId, CoNaLa JSON)."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Blind JSONL for the judge.")],
    key: Annotated[Path, typer.Option("--key", help="JSON key: which side wrote A and B.")],
    seed: Annotated[int, typer.Option("--seed", help="Seed of the A/B order.")] = 3,
    systems: Annotated[
        str,
        typer.Option(
            "--systems",
            help="The two systems compared, as named in the rows; with --against, the "
            "first is taken from ROWS (run 1), the second from the other rows (run 2).",
        ),
    ] = "pipeline,bare",
    against: Annotated[
        Path | None,
        typer.Option(
            "--against",
            help="Rows of a second run of the same questions, e.g. `--against run2.jsonl "
            "--systems pipeline,pipeline` for run 1's pipeline against run 2's.",
        ),
    ] = None,
) -> None:
    """Write a blind A/B file for a judge, and its key apart."""
    from codeweaver_eval.datasets import DatasetError
    from codeweaver_eval.judging import make_blind, sides_of, write_blind

    inputs = {p.resolve() for p in (rows, data, against) if p is not None}
    if out.resolve() == key.resolve() or {out.resolve(), key.resolve()} & inputs:
        raise _refuse("--out and --key must be two new files, neither of them an input")
    try:
        sides = sides_of(rows, _two(systems), against)
        blinded = make_blind(sides, data, seed=seed)
    except (DatasetError, ValueError) as exc:
        raise _refuse(exc) from None
    write_blind(blinded, out, key)
    labels = " and ".join(side.label for side in sides)
    typer.echo(f"{len(blinded.items)} items: {labels} (seed {seed}) in {out}, key in {key}")


def eval_unblind(
    judge_file: Annotated[
        Path,
        typer.Argument(help='The judge\'s JSONL: {"id", "A", "B", "preference", "why"}.'),
    ],
    key: Annotated[Path, typer.Argument(help="The key `codeweaver eval blind` wrote.")],
    as_json: JsonOpt = False,
) -> None:
    """Count a judge's verdicts and preferences per system with the key."""
    from codeweaver_eval.datasets import DatasetError
    from codeweaver_eval.judging import read_judged, read_key, tally

    try:
        result = tally(read_judged(judge_file), read_key(key), judge_file)
    except DatasetError as exc:
        raise _refuse(exc) from None
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.table import Table

    labels = list(result.verdicts)
    console = Console()
    console.print(
        f"[bold]blind judging[/]  (N = {result.n} of {len(result.key.items)} items, "
        f"seed {result.key.seed})",
        highlight=False,
    )
    table = Table("", *labels)
    for verdict in ("acceptable", "partial", "unacceptable"):
        table.add_row(verdict, *(str(result.verdicts[label][verdict]) for label in labels))
    shares = result.acceptable_share
    table.add_row(
        "acceptable share", *("—" if shares[x] is None else f"{shares[x]:.0%}" for x in labels)
    )
    table.add_row("preferred", *(str(result.preference[label]) for label in labels))
    console.print(table)
    typer.echo(f"ties: {result.preference['tie']}")
    if result.n < MIN_JUDGED:
        typer.echo(f"fewer than {MIN_JUDGED} items judged: too few to draw a conclusion")
    for label, side in result.key.sides.items():
        typer.echo(f"{label}: {side.get('system')} of {side.get('rows')}")
    if result.not_acceptable:
        typer.echo("not acceptable:")
    for weak in result.not_acceptable:
        typer.echo(f"  {weak['id']}  {weak['system']}  {weak['verdict']}: {weak['why']}")


def eval_rubric() -> None:
    """Print the rubric a judge is given with the blind file, word for word."""
    from codeweaver_eval.judging import RUBRIC

    typer.echo(RUBRIC, nl=False)
