"""Build a development grounding set from StackEval, with reworded restatements.

Only questions at odd positions of StackEval (0-based line index odd) that neither
`stackeval50.jsonl` nor `stackeval_heldout.jsonl` holds are used, so the set stays apart
from the even-positioned questions a held-out set may draw. For each chosen question the
accepted answer (cut at a sentence within 1,500 characters) is the only source, and two
cases are written:

- supported (`kind: "reworded excerpts"`): two to four sentences of the accepted answer,
  each cited [1] and reworded as a model would (`edits` says how): Markdown stripped or
  code spans added, a lead-in, filler dropped, synonyms, contractions, small numbers
  spelled ("three"), versions padded ("3.8.0"), a leading clause moved to the end, a
  parenthesis dropped; code spans stay as they are. The short code block after one of
  them is copied; one or two uncited sentences of another answer are general knowledge;
- unsupported: the same answer with one cited sentence, reworded as above, changed in
  one fact: `number changed`, `version changed` (Python 3.8, C++11, v2 …), `name changed`
  (an identifier, function, flag, option or command; `detail` says which) or `negation
  changed` (inserted or removed). `false_claim` holds the sentence as written.

    python -m codeweaver_eval.builders.build_grounding_dev \
        --stackeval ../shared/data/intent/stackeval/stack-eval.jsonl \
        --exclude tests/fixtures/grounding/stackeval50.jsonl \
        --exclude tests/fixtures/grounding/stackeval_heldout.jsonl \
        --out tests/fixtures/grounding/stackeval_dev_changed.jsonl --count 60 --seed 7
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codeweaver_eval.builders.build_grounding_heldout import (
    MAX_CHARS,
    Excerpt,
    candidates,
    names,
    negate,
    source_text,
)

KINDS = ("number changed", "version changed", "name changed", "negation changed")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_EMPHASIS = re.compile(r"(?<![\w.])(\*\*|__|\*)(?=\S)(.+?)(?<=\S)\1(?!\w)")
_BARE_NAME = re.compile(
    r"(?<![\w`.])([A-Za-z_]\w*\.[A-Za-z_][\w.]*\(?\)?|[a-z]+_[a-z_]+|[a-z]+[A-Z]\w+)"
)
_WORDS = "zero one two three four five six seven eight nine ten".split()
_SMALL = re.compile(r"(?<![\w.$#`+/-])([0-9]|10)(?![\w.%`/:-]|\.\d)")
_SPELLED = re.compile(r"\b(" + "|".join(_WORDS[1:]) + r")\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.$#+/-])(\d{1,4})(?![\w.%/:-]|\.\d)")
_DOTTED = re.compile(r"(?<![\w.])(\d+)\.(\d+)(?:\.(\d+))?(?![\w]|\.\d)")
_NAMED_VERSION = re.compile(
    r"\b(Python|Java|PHP|Node|Angular|Laravel|Rails|Django|React|Vue|Swift|Kotlin|Ruby|"
    r"Perl|Spring|Bootstrap|iOS|Android|Xcode|Gradle|TypeScript|\.NET|Flutter|Dart|Scala|"
    r"version|Version|v|ES|Qt|GCC|Webpack|Symfony|Rust|Go|Windows|Ubuntu)( ?)(\d+(?:\.\d+)*)"
    r"(?![\w]|\.\d)"
)
_CPP = re.compile(r"\b(C\+\+|c\+\+)(\d\d)\b")
_CPP_YEARS = ("98", "03", "11", "14", "17", "20", "23")
_FLAG = re.compile(r"(?<![\w-])(--?)([A-Za-z][\w-]*)")
_NEGATED = re.compile(r"\b(not|never|cannot)\b|n't\b")
_FLAG_POOL = ("force", "save", "global", "verbose", "recursive", "dry-run", "quiet", "all")
# Auxiliaries that take a "not" after them; "do" and "have" are often the main verb.
_AUXILIARY = re.compile(r"\b(is|are|was|were|can|will|should|must|could|would|may)\b(?! not\b)")
_FILLER = re.compile(r"\b(just|simply|actually|really|basically|probably) ", re.IGNORECASE)
_LEADING = re.compile(
    r"^(If|When|Once|Since|Because|Unless|After|Before|While) ([^,]{8,80}), (.+)$"
)
_PARENTHESIS = re.compile(r"\s\([^()]{3,80}\)")
_SYNONYMS = (
    ("in order to", "to"), ("you need to", "you have to"), ("you should", "you'd better"),
    ("because", "since"), ("However, ", "But "), ("e.g.", "for example"),
    ("i.e.", "that is"), ("make sure", "ensure"), ("Make sure", "Ensure"),
    ("instead of", "rather than"), ("a lot of", "many"), ("You can use", "You could use"),
    ("you can use", "you could use"), ("If you want", "If you wish"), ("will", "is going to"),
    ("the following", "this"), ("There is", "There's"), ("It is", "It's"), ("should", "ought to"),
)  # fmt: skip
# Word for word, as a model rewords: up to three in a sentence.
_WORD_SYNONYMS = {
    "use": "utilize", "get": "obtain", "need": "require", "show": "display",
    "create": "make", "change": "modify", "remove": "delete", "fix": "resolve",
    "problem": "issue", "easy": "simple", "fast": "quick", "also": "additionally",
    "like": "such as", "run": "execute", "start": "begin", "check": "verify",
    "try": "attempt", "allow": "permit", "help": "assist", "big": "large",
    "correct": "right", "wrong": "incorrect", "simply": "merely", "returns": "gives back",
    "works": "functions", "happens": "occurs", "value": "result", "way": "method",
}  # fmt: skip
_CONTRACT = (
    ("does not", "doesn't"), ("is not", "isn't"), ("do not", "don't"), ("cannot", "can't"),
    ("are not", "aren't"), ("it is", "it's"), ("you are", "you're"), ("will not", "won't"),
)  # fmt: skip
LEAD_INS = ("In short, ", "Basically, ", "Note that ", "As the answer explains, ", "Put simply, ")


def _swap_pairs(
    text: str, pairs: tuple[tuple[str, str], ...], rng: random.Random, both: bool = False
) -> str:
    """One phrase of `pairs` replaced (either way when `both`), at its first place."""
    found = [(a, b) for a, b in pairs if re.search(rf"\b{re.escape(a)}(?!\w)", text)]
    if both:
        found += [(b, a) for a, b in pairs if re.search(rf"\b{re.escape(b)}(?!\w)", text)]
    if not found:
        return text
    old, new = rng.choice(found)
    return re.sub(rf"\b{re.escape(old)}(?!\w)", new, text, count=1)


def _synonyms(text: str, rng: random.Random) -> str:
    # A word of prose only: "--use-local", "process.run()" or "npm run" name code.
    prose = re.finditer(r"(?<![\w.:/$@-])[a-z]+(?![\w.:/(-])", text)
    found = [m for m in prose if m.group(0) in _WORD_SYNONYMS and "npm " not in text]
    for match in sorted(rng.sample(found, min(3, len(found))), key=lambda m: -m.start()):
        text = text[: match.start()] + _WORD_SYNONYMS[match.group(0)] + text[match.end() :]
    return text


def _spell_number(text: str, rng: random.Random) -> str:
    """A small count spelled out, or a spelled one written in digits; never a version's
    number ("Java 8") nor "one", which is as often a pronoun."""
    for match in _SMALL.finditer(text):
        if not _NAMED_VERSION.search(text[max(0, match.start() - 12) : match.end()]):
            return text[: match.start()] + _WORDS[int(match.group(1))] + text[match.end() :]
    for match in _SPELLED.finditer(text):
        if match.group(1).lower() != "one":
            digit = str(_WORDS.index(match.group(1).lower()))
            return text[: match.start()] + digit + text[match.end() :]
    return text


def _pad_version(text: str, rng: random.Random) -> str:
    """A named version padded ("Python 3.8" as "Python 3.8.0"), or "v2" as "version 2"."""
    for match in _NAMED_VERSION.finditer(text):
        if match.group(3).count(".") == 1:
            return text[: match.end(3)] + ".0" + text[match.end(3) :]
    return re.sub(r"\bv(\d+)\b", r"version \1", text, count=1)


def _wrap_code(text: str, rng: random.Random) -> str:
    return _BARE_NAME.sub(r"`\1`", text, count=1) if "`" not in text else text


def _move_clause(text: str, rng: random.Random) -> str:
    found = _LEADING.match(text)
    if found is None:
        return text
    rest = found.group(3)
    rest = rest[:1].upper() + rest[1:] if rest[:2].isupper() else rest[:1].lower() + rest[1:]
    return f"{rest.rstrip('.')} {found.group(1).lower()} {found.group(2)}"


def _lead_in(text: str, rng: random.Random) -> str:
    opens = text[:2].isupper() or text.startswith(("But", "And", "So", "If", "Or", "Note"))
    return text if opens else rng.choice(LEAD_INS) + text[:1].lower() + text[1:]


REWORDINGS: tuple[tuple[str, Callable[[str, random.Random], str]], ...] = (
    ("markdown stripped", lambda s, r: _EMPHASIS.sub(r"\2", _CODE_SPAN.sub(r"\1", s))),
    ("code span added", _wrap_code),
    ("lead-in added", _lead_in),
    ("filler dropped", lambda s, r: _FILLER.sub("", s)),
    ("synonym", lambda s, r: _swap_pairs(s, _SYNONYMS, r)),
    ("words swapped", _synonyms),
    ("contraction", lambda s, r: _swap_pairs(s, _CONTRACT, r, both=True)),
    ("number spelled", _spell_number),
    ("version padded", _pad_version),
    ("clause moved", _move_clause),
    ("parenthesis dropped", lambda s, r: _PARENTHESIS.sub("", s, count=1)),
)


def _outside_code(
    text: str, change: Callable[[str, random.Random], str], rng: random.Random
) -> str:
    """`change` applied to `text` with its code spans set aside: no edit rewords code."""
    spans = _CODE_SPAN.findall(text)
    hidden = _CODE_SPAN.sub(lambda m: chr(0xE000 + spans.index(m.group(1))), text)
    changed = change(hidden, rng)
    return re.sub("[\ue000-\ue0ff]", lambda m: f"`{spans[ord(m.group(0)) - 0xE000]}`", changed)


def reword(sentence: str, rng: random.Random) -> tuple[str, list[str]]:
    """The sentence reworded by one to three edits that keep its meaning, and which."""
    text = sentence.rstrip().rstrip(".:;!")
    edits: list[str] = []
    for how, change in rng.sample(REWORDINGS, len(REWORDINGS)):
        formats = how in {"markdown stripped", "code span added"}
        changed = change(text, rng) if formats else _outside_code(text, change, rng)
        if changed != text and changed.strip():
            text, edits = changed, [*edits, how]
        if len(edits) >= rng.choice((1, 2, 3)):
            break
    return text[:1].upper() + text[1:], edits or ["verbatim"]


def _absent(value: str, source: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(value)}(?![\w]|\.\d)", source) is None


def change_number(text: str, source: str, rng: random.Random) -> str | None:
    spelled = _SPELLED.search(text)
    if spelled and spelled.group(1).lower() != "one":
        value = _WORDS.index(spelled.group(1).lower())
        new = _WORDS[(value + rng.choice((1, 2, 3))) % 10 or 2]
        if new != spelled.group(1).lower() and _absent(new, source.lower()):
            return text[: spelled.start()] + new + text[spelled.end() :]
    for match in _NUMBER.finditer(_CODE_SPAN.sub(lambda m: "x" * len(m.group(0)), text)):
        if _NAMED_VERSION.search(text[max(0, match.start() - 12) : match.end()]):
            continue  # a version, not a count
        value = int(match.group(1))
        for other in (value + 1, value * 2 + 2, value + 10):
            if _absent(str(other), source) and _WORDS[min(other, 10)] not in source.lower():
                return text[: match.start()] + str(other) + text[match.end() :]
    return None


def change_version(text: str, source: str, rng: random.Random) -> str | None:
    if found := _CPP.search(text):
        options = [y for y in _CPP_YEARS if y != found.group(2) and f"++{y}" not in source]
        return text[: found.start(2)] + rng.choice(options) + text[found.end(2) :]
    if found := _NAMED_VERSION.search(text):
        *head, last = found.group(3).split(".")
        for bump in rng.sample((1, 2, 3), 3):
            new = ".".join([*head, str(int(last) + bump)])
            if _absent(new, source) and f"{found.group(1)}{found.group(2)}{new}" not in source:
                return text[: found.start(3)] + new + text[found.end(3) :]
    if found := _DOTTED.search(text):
        major, minor = found.group(1), int(found.group(2))
        for bump in rng.sample((1, 2, 3), 3):
            new = f"{major}.{minor + bump}" + (f".{found.group(3)}" if found.group(3) else "")
            if new not in source:
                return text[: found.start()] + new + text[found.end() :]
    return None


def change_name(text: str, source: str, pool: list[str], rng: random.Random) -> tuple[str, str]:
    """A flag, option or command word, or a code name, replaced by another; and which."""
    for flag in _FLAG.finditer(text):
        dashes, word = flag.group(1), flag.group(2)
        # A single letter for another (the check reads flags without case, as a
        # restatement may), a long flag for another long one.
        short = [c for c in "abcdefghijklmnopqrstuvwxyz" if f"-{c}" not in source.lower()]
        long = [f for f in _FLAG_POOL if f != word and f"-{f}" not in source]
        new = rng.choice(short if dashes == "-" and len(word) == 1 else long)
        return text[: flag.start(2)] + new + text[flag.end(2) :], "flag"
    own = names(text)
    for name in rng.sample(own, len(own)):
        bare = name.rstrip("()")
        shaped = [p.rstrip("()") for p in pool if ("." in p) == ("." in name)]
        for other in [*rng.sample(shaped, len(shaped)), *pool]:
            other = other.rstrip("()")
            if other.lower() != bare.lower() and other.lower() not in text.lower():
                detail = "function" if name.endswith("()") else "identifier"
                return text.replace(bare, other, 1), detail
    return "", ""


def change_negation(text: str, rng: random.Random) -> tuple[str, str]:
    removed = negate(text)
    if removed is not None:
        return removed, "removed"
    contracted = re.search(r"\b(is|are|does|do|was|has)\b", text)
    if contracted and rng.random() < 0.4:
        return f"{text[: contracted.end()]}n't{text[contracted.end() :]}", "inserted"
    auxiliary = _AUXILIARY.search(text)
    if auxiliary is None:
        return "", ""
    return f"{text[: auxiliary.end()]} not{text[auxiliary.end() :]}", "inserted"


def contradict(
    kind: str, text: str, source: str, pool: list[str], rng: random.Random
) -> tuple[str, str]:
    """`text` changed in one fact of `kind`, and how; ("", "") when it has none."""
    if kind == "number changed":
        return change_number(text, source, rng) or "", "number"
    if kind == "version changed":
        return change_version(text, source, rng) or "", "version"
    if kind == "name changed":
        return change_name(text, source, pool, rng)
    return change_negation(text, rng)


def compose(lines: list[str], excerpts: list[Excerpt], general: list[str], layout: int) -> str:
    """Cited sentences as prose or bullets, the kept code after its sentence, and the
    uncited general knowledge inline, as a paragraph, or first."""
    parts: list[str] = []
    bullets = layout % 3 == 1
    for line, excerpt in zip(lines, excerpts, strict=True):
        parts.append(f"- {line}" if bullets else line)
        if excerpt.code:
            parts.append("\n" + excerpt.code.strip() + "\n")
    body = ("\n" if bullets else " ").join(parts).replace(" \n", "\n\n").replace("\n ", "\n\n")
    known = " ".join(general)
    return (f"{known}\n\n{body}" if layout % 3 == 0 else f"{body}\n\n{known}") if known else body


def _pick(
    restated: list[str], kinds: list[str], source: str, pool: list[str], rng: random.Random
) -> tuple[str, int, str, str] | None:
    """The first of `kinds` one of the sentences can be changed in: the kind, which
    sentence, the changed sentence and how."""
    rarer = {"name changed": _FLAG, "negation changed": _NEGATED}  # flags, removals first
    for kind in kinds:
        order = rng.sample(range(len(restated)), len(restated))
        if kind in rarer and rng.random() < 0.7:
            order.sort(key=lambda at: rarer[kind].search(restated[at]) is None)
        for at in order:
            changed, detail = contradict(kind, restated[at], source, pool, rng)
            if changed and changed != restated[at]:
                return kind, at, changed, detail
    return None


def build(
    rows: list[dict[str, Any]], excluded: set[str], count: int, seed: int
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    order = [
        i
        for i, r in enumerate(rows)
        if i % 2 == 1 and str(r["question"]).strip()[:MAX_CHARS] not in excluded
    ]
    rng.shuffle(order)
    made = dict.fromkeys(KINDS, 0)
    cases: list[dict[str, Any]] = []
    for position, index in enumerate(order):
        if sum(made.values()) >= count:
            break
        source = source_text(rows[index])
        # A sentence holding a quote's markers ("> >") is a flattened block quote.
        found = [e for e in candidates(source) if ">" not in e.sentence]
        if len(found) < 2:
            continue
        neighbour = source_text(rows[order[(position + 1) % len(order)]])
        prose = re.sub(r"```.*?```", " ", source + "\n" + neighbour, flags=re.DOTALL)
        pool = [n for n in names(prose) if len(n) <= 30 and "__" not in n and "::" not in n]
        restated = [reword(e.sentence, rng) for e in found]
        # The rarer facts first (few sentences hold a version), each up to its share.
        kinds = [k for k in KINDS if made[k] < count // len(KINDS)] or list(KINDS)
        picked = _pick([text for text, _ in restated], kinds, source, pool, rng)
        if picked is None:
            continue
        kind, at, changed, detail = picked
        others = [i for i in range(len(found)) if i != at]
        chosen = sorted([at, *rng.sample(others, min(len(others), rng.choice((1, 2, 3))))])
        excerpts = [found[i] for i in chosen]
        lines = [f"{restated[i][0]} [1]." for i in chosen]
        other = rows[order[(position + 5) % len(order)]]
        general = [c.sentence for c in candidates(source_text(other))][: rng.choice((1, 2))]
        layout = rng.randrange(3)
        false_lines = list(lines)
        false_lines[chosen.index(at)] = f"{changed} [1]."
        question = str(rows[index]["question"]).strip()[:MAX_CHARS]
        sources = [{"title": "Accepted answer", "text": source}]
        meta = {"stackeval_line": index + 1, "question_id": rows[index].get("questionId", "")}
        edits = [restated[i][1] for i in chosen]
        cases.append(
            {"question": question, "sources": sources,
             "answer": compose(lines, excerpts, general, layout), "supported": True,
             "kind": "reworded excerpts", "edits": edits, **meta}
        )  # fmt: skip
        cases.append(
            {"question": question, "sources": sources,
             "answer": compose(false_lines, excerpts, general, layout), "supported": False,
             "kind": kind, "detail": detail, "false_claim": f"{changed} [1].", **meta}
        )  # fmt: skip
        made[kind] += 1
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--stackeval", type=Path, required=True)
    parser.add_argument("--exclude", type=Path, action="append", default=[])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.stackeval.read_text("utf-8").splitlines() if line]
    lines = [line for path in args.exclude for line in path.read_text("utf-8").splitlines()]
    excluded = {str(json.loads(line)["question"]) for line in lines if line.strip()}
    cases = build(rows, excluded, args.count, args.seed)
    with args.out.open("w", encoding="utf-8") as sink:
        for case in cases:
            sink.write(json.dumps(case, ensure_ascii=False) + "\n")
    kinds = Counter(case["kind"] for case in cases)
    sys.stdout.write(f"wrote {len(cases)} cases to {args.out}: {dict(kinds)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
