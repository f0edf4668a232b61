"""Build a held-out grounding set from StackEval questions, by construction and without a model.

For each chosen question the accepted answer is the only source. Two cases are written:

- supported: sentences of the accepted answer restated verbatim or nearly so (Markdown
  stripped, a code span unwrapped, a link removed, punctuation or case changed, a lead-in
  such as "In short," added), each cited [1], with the code block that follows one of
  them, plus uncited general-knowledge sentences from another question's answer;
- unsupported: the same answer with one cited sentence made to contradict the source:
  a negation inserted or removed, a number or a version changed, or a function name
  swapped for another name of the same answer or of a nearby one. `kind` says which, and
  `false_claim` holds the altered sentence.

Questions already in the fixture built from the first 50 (`stackeval50.jsonl`) are
excluded. The choice and every edit follow from `--seed`: the same input gives the same
file.

    python -m codeweaver_eval.builders.build_grounding_heldout \
        --stackeval ../shared/data/intent/stackeval/stack-eval.jsonl \
        --exclude tests/fixtures/grounding/stackeval50.jsonl \
        --out tests/fixtures/grounding/stackeval_heldout.jsonl --count 50 --seed 12
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_CHARS = 1500  # as in the first fixture: bounds the prompt of a model judge
_FENCE = re.compile(r"```.*?```", re.DOTALL)
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\"'])")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_EMPHASIS = re.compile(r"(\*\*|__|\*)(?=\S)(.+?)(?<=\S)\1")
_LINK = re.compile(r"\[([^\]]+)\]\((?:https?://|/)[^)]+\)")
_URL = re.compile(r"\s*\(?https?://\S+\)?")
_VERSION = re.compile(r"(?<![\w.])(\d+)\.(\d+)(?:\.(\d+))?(?![\w]|\.\d)")
_NUMBER = re.compile(r"(?<![\w.$#-])(\d{1,4})(?![\w.%]|\.\d)")
_AUX = re.compile(r"\b(is|are|was|were|can|will|should|must|could|would|does|do|has|have)\b")
_NEGATIONS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(is|are|was|were|does|do|did|has|have|should|could|would)n't\b"), r"\1"),
    (re.compile(r"\bcan't\b|\bcannot\b"), "can"),
    (re.compile(r"\bwon't\b"), "will"),
    (re.compile(r"\b(is|are|was|were|can|will|should|must|could|would|does|do) not\b"), r"\1"),
    (re.compile(r"\bnever\b"), "always"),
]
# A name: a call, a dotted or snake_case or camelCase identifier, or a code span.
_NAME = re.compile(
    r"`([A-Za-z_][\w.]*(?:\(\))?)`"
    r"|\b([A-Za-z_]\w*\.[A-Za-z_][\w.]*(?:\(\))?|[A-Za-z_]\w*\(\)"
    r"|[a-z]+_[a-z_0-9]+|[a-z]+[A-Z]\w*)"
)
_BRACKETED_NUMBER = re.compile(r"\[\d+\]")
_LIST_NUMBER = re.compile(r"[.:]\s+\d+\.?$")
# A lead-in before one of these reads wrong ("In fact, but …"): they open a sentence already.
_OPENERS = frozenset("but however so and or also then moreover edit note in for if".split())
LEAD_INS = ("In short, ", "In fact, ", "Basically, ", "Note that ")


@dataclass(frozen=True)
class Excerpt:
    sentence: str  # as in the source
    code: str  # the code block that follows it in the source, if kept


def prose_blocks(text: str) -> list[tuple[str, str]]:
    """The answer as ("prose", …) and ("code", …) blocks, in order."""
    blocks: list[tuple[str, str]] = []
    position = 0
    for match in _FENCE.finditer(text):
        blocks.append(("prose", text[position : match.start()]))
        blocks.append(("code", match.group(0)))
        position = match.end()
    blocks.append(("prose", text[position:]))
    return [(kind, body) for kind, body in blocks if body.strip()]


def usable(sentence: str) -> bool:
    """A sentence that states something: long enough, prose, not a question or a quote."""
    words = re.findall(r"[A-Za-z]{3,}", _CODE_SPAN.sub(" ", sentence))
    return (
        40 <= len(sentence) <= 240
        and len(words) >= 5
        and not sentence.rstrip().endswith("?")
        and "\n" not in sentence.strip()
        and not sentence.lstrip().startswith((">", "|", "#", "-", "*", "1."))
        and not _BRACKETED_NUMBER.search(sentence)  # "$error[1]" would read as a citation
        and not _LIST_NUMBER.search(sentence)  # "…is: 2" ends in the next item's number
        and sentence[:1].isupper()  # a fragment split off mid-sentence starts in lower case
    )


def candidates(answer: str) -> list[Excerpt]:
    """Each usable prose sentence with the short code block right after its paragraph."""
    found: list[Excerpt] = []
    blocks = prose_blocks(answer)
    for i, (kind, body) in enumerate(blocks):
        if kind != "prose":
            continue
        parts = [" ".join(p.split()) for p in _SPLIT.split(body.strip()) if p.strip()]
        follows = blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "code" else ""
        if follows.count("\n") > 12:
            follows = ""
        for j, part in enumerate(parts):
            if usable(part):
                found.append(Excerpt(part, follows if j == len(parts) - 1 else ""))
    return found


def near_restatement(sentence: str, turn: int) -> tuple[str, str]:
    """The sentence restated nearly verbatim, and how; its end punctuation is removed."""
    text = sentence.rstrip().rstrip(".:;!")
    ways: list[tuple[str, Callable[[str], str]]] = [
        ("verbatim", lambda s: s),
        ("markdown stripped", lambda s: _EMPHASIS.sub(r"\2", _CODE_SPAN.sub(r"\1", s))),
        ("code span unwrapped", lambda s: _CODE_SPAN.sub(r"\1", s, count=1)),
        ("link removed", lambda s: _URL.sub("", _LINK.sub(r"\1", s))),
        ("punctuation changed", lambda s: s.replace(", ", " ").replace(";", ",")),
        ("lead-in added", lambda s: _lead_in(s, turn)),
        ("case changed", lambda s: s.lower()),
    ]
    for step in range(len(ways)):
        how, change = ways[(turn + step) % len(ways)]
        changed = change(text)
        if changed != text or how == "verbatim":
            return changed[:1].upper() + changed[1:], how
    return text, "verbatim"  # pragma: no cover - "verbatim" always applies


def _lead_in(text: str, turn: int) -> str:
    first = re.split(r"\W", text, maxsplit=1)[0].lower()
    if first in _OPENERS or text[:2].isupper():
        return text  # an acronym or an opener keeps its place: try the next edit
    return LEAD_INS[turn % len(LEAD_INS)] + text[:1].lower() + text[1:]


def negate(text: str) -> str | None:
    """Remove the first negation, or else insert one after the first auxiliary."""
    for pattern, replacement in _NEGATIONS:
        if pattern.search(text):
            return pattern.sub(replacement, text, count=1)
    return None


def insert_negation(text: str) -> str | None:
    match = _AUX.search(text)
    if match is None or re.match(r"\s+(not|n't|never)\b", text[match.end() :]):
        return None
    return f"{text[: match.end()]} not{text[match.end() :]}"


def change_version(text: str, source: str) -> str | None:
    for match in _VERSION.finditer(text):
        major, minor = match.group(1), int(match.group(2))
        for bump in (1, 2, 3):
            new = f"{major}.{minor + bump}" + (f".{match.group(3)}" if match.group(3) else "")
            if new not in source:
                return text[: match.start()] + new + text[match.end() :]
    return None


def change_number(text: str, source: str) -> str | None:
    for match in _NUMBER.finditer(text):
        value = int(match.group(1))
        for new in (value + 1, value * 2 + 1, value + 10):
            if not re.search(rf"(?<![\w.]){new}(?![\w.])", source):
                return text[: match.start()] + str(new) + text[match.end() :]
    return None


def names(text: str) -> list[str]:
    """The code names of a text; not an abbreviation ("e.g."), a user ("@G.Smith") or a
    name cut short by a Markdown escape ("node\\_env")."""
    found: list[str] = []
    for match in _NAME.finditer(text):
        name = (match.group(1) or match.group(2)).rstrip(".")
        before, after = text[match.start() - 1 : match.start()], text[match.end() :][:1]
        short = any(len(part) < 2 for part in name.rstrip("()").split("."))
        if len(name.strip("()")) > 2 and not short and before != "@" and after != "\\":
            found.append(name)
    return list(dict.fromkeys(found))


def swap_name(text: str, pool: list[str]) -> str | None:
    """A name of the sentence replaced by another name from `pool` (never a bare word)."""
    own = names(text)
    for name in own:
        for other in pool:
            bare, other_bare = name.rstrip("()"), other.rstrip("()")
            if other_bare.lower() in text.lower() or other_bare == bare:
                continue
            replacement = other_bare + ("()" if name.endswith("()") else "")
            return text.replace(name, replacement, 1)
    return None


KINDS = ("negation inserted", "negation removed", "number changed", "version changed", "name")


def contradict(kind: str, text: str, source: str, pool: list[str]) -> str | None:
    """`text` altered to contradict the source in the way `kind` says, if it can be."""
    if kind == "negation inserted":
        return insert_negation(text) if negate(text) is None else None
    if kind == "negation removed":
        return negate(text)
    if kind == "number changed":
        return None if _VERSION.search(text) else change_number(text, source)
    if kind == "version changed":
        return change_version(text, source)
    return swap_name(text, pool)


def source_text(row: dict[str, Any]) -> str:
    """The accepted answer as kept in the source: cut at a sentence within MAX_CHARS."""
    text = str(row["answer"]).strip()
    if len(text) <= MAX_CHARS:
        return text
    cut = text[:MAX_CHARS]
    if cut.count("```") % 2:  # never keep half a code block
        cut = cut[: cut.rfind("```")]
    end = max(cut.rfind(". "), cut.rfind(".\n"))
    return cut[: end + 1] if end > 0 else cut


def build(
    rows: list[dict[str, Any]], excluded: set[str], count: int, seed: int
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    order = [
        i for i, r in enumerate(rows) if str(r["question"]).strip()[:MAX_CHARS] not in excluded
    ]
    rng.shuffle(order)
    cases: list[dict[str, Any]] = []
    made: dict[str, int] = dict.fromkeys(KINDS, 0)
    for position, index in enumerate(order):
        if sum(made.values()) >= count:
            break
        row = rows[index]
        source = source_text(row)
        found = candidates(source)
        if len(found) < 2:
            continue
        turn = sum(made.values())
        chosen = sorted(rng.sample(range(len(found)), min(len(found), rng.choice((2, 3, 4)))))
        # Names to swap in: from this answer first, then from the next question's.
        neighbour = source_text(rows[order[(position + 1) % len(order)]])
        pool = names(_FENCE.sub(" ", source)) + names(_FENCE.sub(" ", neighbour))
        picked = _pick_contradiction(found, chosen, turn, made, source, pool, rng)
        if picked is None:
            continue
        chosen, at, changed, kind = picked
        excerpts = [found[i] for i in chosen]
        lines: list[str] = []
        edits: list[str] = []
        for n, excerpt in enumerate(excerpts):
            text, how = near_restatement(excerpt.sentence, turn + n)
            edits.append(how)
            lines.append(f"{text} [1].")
        # Uncited general knowledge: one or two sentences of another question's answer.
        other_row = rows[order[(position + 7) % len(order)]]
        general = [c.sentence for c in candidates(source_text(other_row))][: rng.choice((1, 2))]
        supported = _compose(lines, excerpts, general, turn)
        false_lines = list(lines)
        false_lines[at] = f"{changed} [1]."
        unsupported = _compose(false_lines, excerpts, general, turn)
        question = str(row["question"]).strip()[:MAX_CHARS]
        sources = [{"title": "Accepted answer", "text": source}]
        meta = {"stackeval_line": index + 1, "question_id": row.get("questionId", "")}
        label = "name swapped" if kind == "name" else kind
        cases.append(
            {"question": question, "sources": sources, "answer": supported,
             "supported": True, "kind": "source excerpts", "edits": edits, **meta}
        )  # fmt: skip
        cases.append(
            {"question": question, "sources": sources, "answer": unsupported,
             "supported": False, "kind": label, "false_claim": f"{changed} [1].", **meta}
        )  # fmt: skip
        made[kind] += 1
    return cases


def _pick_contradiction(
    found: list[Excerpt],
    chosen: list[int],
    turn: int,
    made: dict[str, int],
    source: str,
    pool: list[str],
    rng: random.Random,
) -> tuple[list[int], int, str, str] | None:
    """The excerpts to use, which of them to alter, its altered text and the kind.

    The kind made least so far is tried first, so the kinds stay balanced; a sentence
    outside the chosen ones may replace one of them when only it allows that kind.
    """
    kinds = sorted(KINDS, key=lambda k: (made[k], (KINDS.index(k) - turn) % len(KINDS)))
    others = [i for i in range(len(found)) if i not in chosen]
    for kind in kinds:
        for candidate in [*rng.sample(chosen, len(chosen)), *others]:
            if candidate in chosen:
                position = chosen.index(candidate)
                use = chosen
            else:
                replaced = rng.randrange(len(chosen))
                use = sorted([*chosen[:replaced], *chosen[replaced + 1 :], candidate])
                position = use.index(candidate)
            text, _ = near_restatement(found[candidate].sentence, turn + position)
            changed = contradict(kind, text, source, pool)
            if changed and changed != text:
                return use, position, changed, kind
    return None


def _compose(lines: list[str], excerpts: list[Excerpt], general: list[str], turn: int) -> str:
    """Cited sentences with their kept code block; the uncited ones inline or apart."""
    groups: list[list[str]] = [[]]
    codes: list[str] = []
    for line, excerpt in zip(lines, excerpts, strict=True):
        groups[-1].append(line)
        if excerpt.code:
            codes.append(excerpt.code.strip())
            groups.append([])
    if general and turn % 2:  # inline, right after the first cited sentence
        groups[0].insert(1, " ".join(general))
    paragraphs: list[str] = []
    for n, group in enumerate(groups):
        if group:
            paragraphs.append(" ".join(group))
        if n < len(codes):
            paragraphs.append(codes[n])
    if general and not turn % 2:
        paragraphs.append(" ".join(general))
    return "\n\n".join(paragraphs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stackeval", type=Path, required=True)
    parser.add_argument("--exclude", type=Path, action="append", default=[])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.stackeval.read_text("utf-8").splitlines() if line]
    excluded = {
        str(json.loads(line)["question"])
        for path in args.exclude
        for line in path.read_text("utf-8").splitlines()
        if line.strip()
    }
    cases = build(rows, excluded, args.count, args.seed)
    with args.out.open("w", encoding="utf-8") as sink:
        for case in cases:
            sink.write(json.dumps(case, ensure_ascii=False) + "\n")
    kinds: dict[str, int] = {}
    for case in cases:
        kinds[case["kind"]] = kinds.get(case["kind"], 0) + 1
    sys.stdout.write(f"wrote {len(cases)} cases to {args.out}: {kinds}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
