"""Judging answers blind: two systems' answers to the same questions, side by side in a
seeded random order and without what gives a system away, for a judge who reads them
against the reference answer; then the judge's verdicts counted per system with the key.

The answers come from the rows `codeweaver eval answers --out` writes: two systems of one
run (the pipeline and the bare model), or one system of each of two runs of the same
questions (run 1's pipeline against run 2's). The reference is looked up in the data set
the questions came from (`answers_eval.load_answer_cases`).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codeweaver_eval.answers_eval import VERDICTS, AnswerCase, load_answer_cases
from codeweaver_eval.datasets import DatasetError, read_jsonl

RUBRIC = """\
For each item judge each answer against the question and the reference:
- **acceptable**: correct and useful; a developer could act on it, and it agrees with the reference
  in substance (it may differ in form or offer another correct way).
- **partial**: some correct, useful content, but incomplete, vague, or with an error a developer
  would have to notice.
- **unacceptable**: wrong, misleading, off-topic, or uses made-up APIs, flags or settings.

Then a preference, `A`, `B` or `tie` (which answer you would rather a colleague received), and a
one-sentence `why` naming the decisive facts. Be strict about invented APIs, wrong version facts and
code that would not work. Do not reward length.

Write one JSON line per item, in the input's order:
`{"id": …, "A": "acceptable|partial|unacceptable", "B": "…", "preference": "A|B|tie", "why": "…"}`
"""
"""What the judge is given besides the blind file, word for word (docs/measurements.md
quotes it)."""

DEFAULT_SEED = 3
PREFERENCES = ("A", "B", "tie")
SIDES = ("A", "B")
NO_ANSWER = "(no answer)"

# What gives a system away: the pipeline's notice line in italics at the start, its list
# of sources, its warnings as quoted lines, and its citation marks (outside code, where
# `argv[1]` is an index).
_NOTICE = re.compile(r"^_[^\n]*_\n+")
_SOURCES = re.compile(r"\n+(Sources|출처)\s*:?\s*\n.*", re.S)
_WARNING = re.compile(r"\n+> [^\n]*(⚠|Warning|경고)[^\n]*")
_MARK = re.compile(r"\s?\[\d+\]")
_CODE = re.compile(r"(```.*?```|`[^`\n]+`)", re.S)


def strip_giveaways(answer: str | None) -> str:
    """The answer as the judge sees it: notice, sources, warnings and `[n]` marks removed."""
    text = answer or NO_ANSWER
    text = _NOTICE.sub("", text)
    text = _SOURCES.sub("", text)
    text = _WARNING.sub("", text)
    parts = _CODE.split(text)  # odd places: code, kept as written
    return "".join(p if i % 2 else _MARK.sub("", p) for i, p in enumerate(parts)).strip()


def first_line(text: str) -> str:
    """The first non-blank line, stripped ("" for blank text): a StackEval post's title."""
    stripped = text.strip()
    return stripped.splitlines()[0].strip() if stripped else ""


# --------------------------------------------------------------------------- blind


@dataclass(frozen=True)
class Side:
    """One side of the comparison: a system of one rows file, under the label the key uses."""

    label: str
    rows: Path
    system: str
    run: int = 1


@dataclass(frozen=True)
class _Row:
    line: int
    question: str
    answer: str


@dataclass(frozen=True)
class Blinded:
    """The blind file's items, in the rows' order, and the key that unblinds them."""

    items: list[dict[str, str]]
    key: dict[str, Any]


def sides_of(
    rows: Path, systems: tuple[str, str], against: Path | None = None
) -> tuple[Side, Side]:
    """The two sides: two systems of `rows`, or with `against` the first system of `rows`
    (run 1) and the second of `against` (run 2)."""
    first, second = systems
    if against is None:
        if first == second:
            raise ValueError(
                f"both sides are {first!r}: name two systems, or give --against to compare "
                "the same system in two runs"
            )
        return Side(first, rows, first), Side(second, rows, second)
    if first == second and against.resolve() == rows.resolve():
        raise ValueError(f"--against names the same rows file: both sides would be {first!r}")
    return Side(f"run1:{first}", rows, first, 1), Side(f"run2:{second}", against, second, 2)


def make_blind(sides: tuple[Side, Side], data: Path, *, seed: int = DEFAULT_SEED) -> Blinded:
    """Every question of the first side's rows with its reference and both answers, the
    order of the answers drawn with `seed`; `DatasetError` for a row without the side's
    system, a question without a reference, or runs that asked different questions."""
    one, two = sides
    answers_one = _answers(one.rows, one.system)
    answers_two = _answers(two.rows, two.system)
    if two.rows != one.rows:
        _same_questions(one.rows, answers_one, two.rows, answers_two)
    references = _ReferenceIndex(load_answer_cases(data))
    rng = random.Random(seed)
    items: list[dict[str, str]] = []
    order: dict[str, dict[str, str]] = {}
    for ident, row in answers_one.items():
        case = references.find(ident, row.question)
        if case is None:
            raise DatasetError(one.rows, f"no reference in {data} for question {ident}", row.line)
        flip = rng.random() < 0.5
        a, b = (two, one) if flip else (one, two)
        got = {one.label: row.answer, two.label: answers_two[ident].answer}
        order[ident] = {"A": a.label, "B": b.label}
        items.append(
            {
                "id": ident,
                "question": row.question,
                "reference_answer": case.reference,
                "answer_A": strip_giveaways(got[a.label]),
                "answer_B": strip_giveaways(got[b.label]),
            }
        )
    key = {
        "seed": seed,
        "data": str(data),
        "sides": {s.label: {"run": s.run, "rows": str(s.rows), "system": s.system} for s in sides},
        "items": order,
    }
    return Blinded(items, key)


def write_blind(blinded: Blinded, out: Path, key: Path) -> None:
    """The blind file (one JSON line per item) and its key (JSON), written apart."""
    lines = (json.dumps(item, ensure_ascii=False) + "\n" for item in blinded.items)
    out.write_text("".join(lines), encoding="utf-8")
    key.write_text(json.dumps(blinded.key, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _answers(path: Path, system: str) -> dict[str, _Row]:
    """`system`'s answer to each question of an `eval answers --out` file, by row id."""
    found: dict[str, _Row] = {}
    for line, row in read_jsonl(path):
        ident, question, systems = row.get("id"), row.get("question"), row.get("systems")
        if not isinstance(ident, str | int) or not isinstance(question, str):
            raise DatasetError(
                path, "a row of `eval answers --out` needs `id` and `question`", line
            )
        named = systems.get(system) if isinstance(systems, dict) else None
        if not isinstance(named, dict):
            has = ", ".join(sorted(systems)) if isinstance(systems, dict) else "none"
            raise DatasetError(path, f"row {ident} has no system {system!r} (it has: {has})", line)
        answer = named.get("answer")
        if str(ident) in found:
            raise DatasetError(path, f"question {ident} appears twice", line)
        found[str(ident)] = _Row(line, question, answer if isinstance(answer, str) else "")
    return found


def _same_questions(
    path_one: Path, one: Mapping[str, _Row], path_two: Path, two: Mapping[str, _Row]
) -> None:
    for ident, row in one.items():
        if ident not in two:
            raise DatasetError(path_two, f"question {ident} of {path_one} is not there")
        if two[ident].question != row.question:
            raise DatasetError(
                path_two, f"question {ident} is asked differently in {path_one}", two[ident].line
            )
    extra = [ident for ident in two if ident not in one]
    if extra:
        raise DatasetError(
            path_two, f"question {extra[0]} is not in {path_one}", two[extra[0]].line
        )


class _ReferenceIndex:
    """The data set's cases by id and by their question's first line.

    A row's id and first line point to the same case when the row asked the question as it
    stands; a row that asked only the title is found by its first line; a row that asked a
    translation (a Korean file keeping StackEval's `questionId`) by its id alone.
    """

    def __init__(self, cases: Sequence[AnswerCase]) -> None:
        self.by_id: dict[str, AnswerCase] = {}
        self.by_line: dict[str, AnswerCase] = {}
        for case in cases:
            self.by_id.setdefault(case.id, case)
            self.by_line.setdefault(first_line(case.question), case)

    def find(self, ident: str, question: str) -> AnswerCase | None:
        line = first_line(question)
        by_id = self.by_id.get(ident)
        if by_id is not None and first_line(by_id.question) == line:
            return by_id
        return self.by_line.get(line) or by_id


# --------------------------------------------------------------------------- unblind


@dataclass(frozen=True)
class Judged:
    """One line of the judge's file."""

    line: int
    id: str
    verdicts: dict[str, str]
    preference: str
    why: str


@dataclass(frozen=True)
class Key:
    """What `make_blind` wrote beside the blind file: which side each answer came from."""

    seed: int | None
    sides: dict[str, dict[str, Any]]
    items: dict[str, dict[str, str]]


@dataclass
class Tally:
    """The verdicts and preferences counted per side, and the answers not acceptable."""

    key: Key
    n: int = 0
    verdicts: dict[str, dict[str, int]] = field(default_factory=dict)
    preference: dict[str, int] = field(default_factory=dict)
    not_acceptable: list[dict[str, str]] = field(default_factory=list)

    @property
    def acceptable_share(self) -> dict[str, float | None]:
        """Share of the judged answers that are acceptable, per side."""
        return {
            label: round(counts["acceptable"] / self.n, 3) if self.n else None
            for label, counts in self.verdicts.items()
        }

    def to_dict(self) -> dict[str, Any]:
        """The tally as `--json` prints it."""
        return {
            "n": self.n,
            "items_in_key": len(self.key.items),
            "seed": self.key.seed,
            "sides": self.key.sides,
            "verdicts": self.verdicts,
            "acceptable_share": self.acceptable_share,
            "preference": self.preference,
            "not_acceptable": self.not_acceptable,
        }


def read_key(path: Path) -> Key:
    """The key `make_blind` wrote; `DatasetError` when it is not one."""
    if not path.is_file():
        raise DatasetError(path, "no such file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(path, f"not JSON: {exc}") from None
    sides, items = (data.get(k) if isinstance(data, dict) else None for k in ("sides", "items"))
    if not isinstance(sides, dict) or len(sides) != 2 or not isinstance(items, dict):
        raise DatasetError(path, "not a key of `codeweaver eval blind` (`sides`, `items`)")
    for ident, order in items.items():
        if not isinstance(order, dict) or sorted(order.values()) != sorted(sides):
            raise DatasetError(path, f"item {ident}: `A` and `B` must name the two sides")
    seed = data.get("seed")
    return Key(seed if isinstance(seed, int) else None, sides, items)


def read_judged(path: Path) -> list[Judged]:
    """The judge's lines `{"id", "A", "B", "preference", "why"}`; `DatasetError` names the
    first bad line."""
    judged: list[Judged] = []
    for line, row in read_jsonl(path):
        ident = row.get("id")
        if not isinstance(ident, str | int) or isinstance(ident, bool):
            raise DatasetError(path, "needs an `id`", line)
        for side in SIDES:
            if row.get(side) not in VERDICTS:
                allowed = ", ".join(VERDICTS)
                raise DatasetError(path, f"`{side}` must be one of {allowed}", line)
        if row.get("preference") not in PREFERENCES:
            raise DatasetError(path, "`preference` must be A, B or tie", line)
        why = row.get("why")
        if not isinstance(why, str) or not why.strip():
            raise DatasetError(path, "needs a `why`", line)
        verdicts = {side: str(row[side]) for side in SIDES}
        judged.append(Judged(line, str(ident), verdicts, str(row["preference"]), why.strip()))
    return judged


def tally(judged: Sequence[Judged], key: Key, judge_file: Path | str = "judge file") -> Tally:
    """Each verdict and preference counted for the side the key says wrote the answer."""
    labels = list(key.sides)
    result = Tally(
        key,
        verdicts={label: dict.fromkeys(VERDICTS, 0) for label in labels},
        preference={**dict.fromkeys(labels, 0), "tie": 0},
    )
    seen: set[str] = set()
    for item in judged:
        order = key.items.get(item.id)
        if order is None:
            raise DatasetError(judge_file, f"item {item.id} is not in the key", item.line)
        if item.id in seen:
            raise DatasetError(judge_file, f"item {item.id} is judged twice", item.line)
        seen.add(item.id)
        for side in SIDES:
            label, verdict = order[side], item.verdicts[side]
            result.verdicts[label][verdict] += 1
            if verdict != "acceptable":
                result.not_acceptable.append(
                    {"id": item.id, "system": label, "verdict": verdict, "why": item.why}
                )
        result.preference[order.get(item.preference, "tie")] += 1
    result.n = len(seen)
    return result
