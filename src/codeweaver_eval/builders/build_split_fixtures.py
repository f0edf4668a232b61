"""Build the question-splitting fixtures from public data, labels by construction.

- `single_real.jsonl`: every StackEval post as a user pastes it (title, body, code); each
  is one question, so `questions` is the message itself.
- `joined.jsonl`: messages that join 2 or 3 different real questions with the connectives
  people use ("Also, …", "And another thing: …", numbered lines, one per line, a chain of
  "?"; in Korean "그리고", "또", "아 그리고", numbered, one per line). English questions are
  StackEval titles (first line of `question`) or CoNaLa intents; Korean ones come from the
  songys question pairs. The questions of one message share no content word, so their
  subjects differ; 2 questions are `multiple_questions`, 3 are `too_many`.

Only questions that read as questions on their own are used (a final "?" or an
interrogative first word, or a Korean question ending with "?"), with one "?" at most,
no back-reference ("it", "this", "그거", …) and no joiner of their own ("and also"), so
that each label holds by construction. The draw follows from `--seed`: the same data and
seed give the same files, byte for byte. Imports nothing from CodeWeaver, so the labels
do not depend on the rules they measure.

    python -m codeweaver_eval.builders.build_split_fixtures --data ../shared/data \
        --out tests/fixtures/split --seed 12
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STACKEVAL = Path("intent/stackeval/stack-eval.jsonl")
CONALA = Path("retrieval/conala/conala-train.json")
KOREAN = Path("pairs/korean_songys/kor_pair_train.csv")

_EN_QUESTION = re.compile(
    r"^(how|what|why|when|where|which|who|can|could|is|are|does|do|did|should|would|will)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z0-9]+|[가-힣]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Words that point at something said before, or join a second question of their own.
_BACK_OR_JOIN = re.compile(
    r"\b(it|its|this|that|these|those|they|them|one|also|plus|each)\b"
    r"|\band (how|what|why|when|where|which)\b|\bas well as\b"
    r"|그거|그것|그건|이거|이것|이건|이게|그게|그럼|그는|그녀|그 사람|그리고|또",
    re.IGNORECASE,
)
_STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from into as is are was were be
    been do does did have has had i you he she it we they me my your our their what which
    who how why when where can could should would will not no so than very just about
    all any some only there here get use using way""".split()
)
_SEPARATORS = re.compile(r";|\s/\s|\s\|\s")


@dataclass(frozen=True)
class Question:
    """One real question and where it comes from."""

    text: str
    source: str
    ref: str  # line number in the source file, or id

    def part(self) -> dict[str, str]:
        return {"text": self.text, "source": self.source, "ref": self.ref}


def content_stems(text: str) -> set[str]:
    """Content words, cut to a short prefix so that inflections meet ("sorting"/"sort").

    Deliberately coarser than any subject comparison the planner makes: two questions
    with no stem in common here share no subject word there either.
    """
    stems: set[str] = set()
    for word in _WORD.findall(_CAMEL.sub(" ", text.replace("_", " "))):
        lowered = word.lower()
        if lowered in _STOPWORDS:
            continue
        if "가" <= lowered[0] <= "힣":
            stems.add(lowered[:2])
        else:  # the plural goes first: "rows" and "row" meet
            single = lowered[:-1] if len(lowered) > 3 and lowered.endswith("s") else lowered
            stems.add(single[:4])
    return stems


def _usable(text: str) -> bool:
    return (
        10 <= len(text) <= 160
        and text.count("?") + text.count("？") <= 1
        and not text.rstrip("?？ ").count("?")
        and "\n" not in text
        and "`" not in text
        and not _SEPARATORS.search(text)
        and not _BACK_OR_JOIN.search(text)
        and len(content_stems(text)) >= 2
    )


def english_questions(data: Path) -> tuple[list[Question], list[Question]]:
    """Question-like StackEval titles and CoNaLa intents."""
    titles: list[Question] = []
    with (data / STACKEVAL).open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            row = json.loads(line)
            title = row["question"].split("\n", 1)[0].strip()
            if (title.endswith("?") or _EN_QUESTION.match(title)) and _usable(title):
                titles.append(Question(title, "stackeval", f"line {number}"))
    intents: list[Question] = []
    seen: set[str] = set()
    for index, row in enumerate(json.loads((data / CONALA).read_text(encoding="utf-8"))):
        intent = (row.get("intent") or "").strip()
        if intent in seen or not (intent.endswith("?") or _EN_QUESTION.match(intent)):
            continue
        if _usable(intent):
            seen.add(intent)
            intents.append(Question(intent, "conala", f"index {index}"))
    return titles, intents


def korean_questions(data: Path) -> list[Question]:
    """Korean questions ending with "?" from the songys pair set (either column)."""
    found: list[Question] = []
    seen: set[str] = set()
    with (data / KOREAN).open(encoding="utf-8-sig", newline="") as fh:
        for row in csv.DictReader(fh):
            for column in ("question1", "question2"):
                text = row[column].strip()
                if text in seen or not text.endswith("?") or len(text.split()) < 2:
                    continue
                if _usable(text):
                    seen.add(text)
                    found.append(Question(text, "korean_songys", f"id {row['id']} {column}"))
    return found


def _ask(text: str) -> str:
    """The question with a final "?" if it has no end punctuation of its own."""
    return text if text[-1] in "?？.!" else text + "?"


def _lower_first(text: str) -> str:
    # "How do I …" → "how do I …", but an acronym or name keeps its case ("CSS", "Java").
    if len(text) > 1 and text[0].isupper() and not text[1].isupper() and _EN_QUESTION.match(text):
        return text[0].lower() + text[1:]
    return text


Style = Callable[[Sequence[str]], tuple[str, list[str]]]


def _inline(*joiners: str) -> Style:
    """Questions joined inline; after a comma ("Also, how …") the next one goes on in
    lower case."""

    def join(parts: Sequence[str]) -> tuple[str, list[str]]:
        asked = [_ask(p) for p in parts]
        pieces = [asked[0]]
        for joiner, part in zip(joiners, asked[1:], strict=False):
            pieces.append(f"{joiner} {_lower_first(part) if joiner.endswith(',') else part}")
        return " ".join(pieces), asked

    return join


def _numbered(parts: Sequence[str]) -> tuple[str, list[str]]:
    return "\n".join(f"{i}. {p}" for i, p in enumerate(parts, start=1)), list(parts)


def _lines(parts: Sequence[str]) -> tuple[str, list[str]]:
    return "\n".join(parts), list(parts)


def _chain(parts: Sequence[str]) -> tuple[str, list[str]]:
    asked = [_ask(p) for p in parts]
    return " ".join(asked), asked


EN_STYLES: dict[str, Style] = {
    "also": _inline("Also,", "And another thing:"),
    "another_thing": _inline("And another thing:", "Also,"),
    "numbered": _numbered,
    "lines": _lines,
    "chain": _chain,
}
KO_STYLES: dict[str, Style] = {
    "geurigo": _inline("그리고", "또"),
    "tto": _inline("또", "아 그리고"),
    "a_geurigo": _inline("아 그리고", "그리고"),
    "numbered": _numbered,
    "lines": _lines,
    "chain": _chain,
}


def _draw(rng: random.Random, pool: Sequence[Question], count: int) -> list[Question]:
    """`count` questions of the pool whose content words are pairwise disjoint."""
    while True:
        chosen: list[Question] = []
        used: set[str] = set()
        for candidate in rng.sample(list(pool), min(len(pool), 8 * count)):
            stems = content_stems(candidate.text)
            if stems & used or any(c.text == candidate.text for c in chosen):
                continue
            chosen.append(candidate)
            used |= stems
            if len(chosen) == count:
                return chosen


def joined_rows(
    rng: random.Random,
    pools: Sequence[Sequence[Question]],
    styles: dict[str, Style],
    lang: str,
    per_count: int,
) -> list[dict[str, Any]]:
    """`per_count` messages of 2 questions and as many of 3, styles and pools in turn."""
    rows: list[dict[str, Any]] = []
    names = sorted(styles)
    for count, case in ((2, "multiple_questions"), (3, "too_many")):
        for i in range(per_count):
            pool = pools[i % len(pools)]
            style = names[i % len(names)]
            chosen = _draw(rng, pool, count)
            message, questions = styles[style]([q.text for q in chosen])
            rows.append(
                {
                    "message": message,
                    "questions": questions,
                    "case": case,
                    "lang": lang,
                    "style": style,
                    "parts": [q.part() for q in chosen],
                }
            )
    return rows


def single_rows(data: Path) -> list[dict[str, Any]]:
    """Every StackEval post, unchanged, as one question."""
    rows: list[dict[str, Any]] = []
    with (data / STACKEVAL).open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            row = json.loads(line)
            rows.append(
                {
                    "message": row["question"],
                    "questions": [row["question"]],
                    "case": "single_topic",
                    "lang": "en",
                    "source": "stackeval",
                    "line": number,
                    "id": row["questionId"],
                    "type": row["questionMetadata"]["type"],
                }
            )
    return rows


def build(data: Path, seed: int, per_count_en: int, per_count_ko: int) -> dict[str, list[Any]]:
    """The rows of each fixture file, by name."""
    rng = random.Random(seed)
    titles, intents = english_questions(data)
    korean = korean_questions(data)
    joined = joined_rows(rng, [titles, intents], EN_STYLES, "en", per_count_en)
    joined += joined_rows(rng, [korean], KO_STYLES, "ko", per_count_ko)
    return {"single_real.jsonl": single_rows(data), "joined.jsonl": joined}


def write(rows: dict[str, list[Any]], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, items in rows.items():
        with (out / name).open("w", encoding="utf-8", newline="\n") as fh:
            for item in items:
                fh.write(json.dumps(item, ensure_ascii=False) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--out", type=Path, default=Path("tests/fixtures/split"))
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--english", type=int, default=200, help="English messages per count")
    parser.add_argument("--korean", type=int, default=100, help="Korean messages per count")
    args = parser.parse_args(argv)
    rows = build(args.data, args.seed, args.english, args.korean)
    write(rows, args.out)
    for name, items in rows.items():
        sys.stderr.write(f"{args.out / name}: {len(items)} rows\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
