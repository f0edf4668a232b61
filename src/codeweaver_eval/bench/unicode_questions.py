"""Benchmark: `validate_question` accepts every real question and rejects real binary.

Questions: every question text of the shared data sets (StackEval, CoNaLa intents and
pairs, AskUbuntu titles and bodies, Korean question pairs, CS1QA, chat-langchain), plus
the repository's Korean and split fixtures. Each must pass; one longer than the length
limit is counted apart (that is the length rule, not a false "binary" rejection).

Binary: samples of files from the virtualenv's site-packages (`.so`, `.pyc`, images,
archives), decoded as a question would arrive: UTF-8 with errors="replace", and
latin-1; each also with its NUL characters removed, as `ask "$(cat file)"` does. Every
sample must be rejected.

Also measures `defuse` (the prompt delimiter) on the questions: how many it alters, and
that it changes nothing but the `<` of our own tags.

    .venv/bin/python -m codeweaver_eval.bench.unicode_questions [--data ../shared/data] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import sysconfig
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from codeweaver.agent.prompts.delimit import DEFUSED, OWN_TAGS, defuse
from codeweaver.agent.rules.input_check import (
    MAX_QUESTION_CHARS,
    InvalidQuestionError,
    validate_question,
)
from codeweaver_eval.cache_eval import load_pairs
from codeweaver_eval.datasets import load_intent_examples, load_split_examples, read_jsonl
from codeweaver_eval.repository import ROOT, SHARED_DATA
from codeweaver_eval.retrieval_eval import load_questions

BINARY_SUFFIXES = (".so", ".pyc", ".png", ".jpg", ".gif", ".ico", ".gz", ".zip", ".whl", ".npy")
SIZES = (256, 1024, 4096, 7000)  # bytes; all under the length limit once decoded
FILES_PER_SUFFIX = 40
_OWN_TAG = re.compile(r"<(?=\s*/?\s*(?:" + "|".join(OWN_TAGS) + r")(?![\w-]))", re.IGNORECASE)


# Text real users write that the old rule called binary (D7), and pasted terminal output.
UNUSUAL = [
    "What is the best way to render 👨‍👩‍👧‍👦 👨‍👩‍👧‍👦 👨‍👩‍👧‍👦 in Python?",
    "Why does this fail?\n" + "\u00a0" * 12 + "return x",
    "How do I split on\u200b" * 10,
    "파이썬에서\u3000리스트를\u3000정렬하는\u3000방법은?" * 3,
    "كيف أرتب قائمة\u200f في بايثون؟" * 9,
    "Why does my source have form feeds?\n" + "def f():\n    pass\n\f" * 9,
    "\ufeffHow do I strip a BOM?\u200e" * 9,
    "Why does pytest print \x1b[31mFAILED\x1b[0m and \x1b]0;title\x07?\n" * 9,
    "I get ������ when reading a cp949 file, why?",
]


def _jsonl_field(path: Path, *keys: str) -> Iterator[str]:
    for _, row in read_jsonl(path):
        value: object = row
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, str):
            yield value


def questions(data: Path) -> dict[str, list[str]]:
    """Question texts by data set, read with the project's loaders where they exist."""
    stackeval = data / "intent/stackeval/stack-eval.jsonl"
    conala = data / "retrieval/conala/conala-train.json"
    askubuntu = data / "pairs/askubuntu/askubuntu_dup_pairs_val.jsonl"
    sets: dict[str, list[str]] = {
        "stackeval": [e.question for e in load_intent_examples(stackeval)],
        "stackeval llm-as-judge": list(
            _jsonl_field(data / "intent/stackeval/llm-as-judge.jsonl", "Question")
        ),
        "conala intents": [q.intent for q in load_questions(conala)],
        "conala rewritten intents": [
            str(row["rewritten_intent"])
            for row in json.loads(conala.read_text(encoding="utf-8"))
            if isinstance(row.get("rewritten_intent"), str)
        ],
        "conala pairs": [
            q
            for p in load_pairs(data / "pairs/conala/conala_pairs_train.jsonl")
            for q in (p.q1, p.q2)
        ],
        "askubuntu titles": [q for p in load_pairs(askubuntu) for q in (p.q1, p.q2)],
        "askubuntu bodies": [
            *_jsonl_field(askubuntu, "body1"),
            *_jsonl_field(askubuntu, "body2"),
        ],
        "korean pairs": [
            q
            for p in load_pairs(data / "pairs/korean_songys/kor_pair_train.csv")
            for q in (p.q1, p.q2)
        ],
        "cs1qa": [
            text
            for name in ("corpus.jsonl", "q_dev.jsonl", "q_test.jsonl")
            for text in _jsonl_field(data / "intent/cs1qa" / name, "text")
        ],
        "chat-langchain": list(
            _jsonl_field(
                data / "answers/chat_langchain/qa_dataset_langsmith.jsonl", "inputs", "question"
            )
        ),
        "fixtures: korean": list(
            _jsonl_field(ROOT / "tests/fixtures/korean/stackeval_ko20.jsonl", "question")
        ),
        "fixtures: split": [
            text
            for path in sorted((ROOT / "tests/fixtures/split").glob("*.jsonl"))
            for e in load_split_examples(path)
            for text in (e.message, *e.questions)
        ],
    }
    sets["hand-made: unusual text"] = UNUSUAL
    return {name: list(dict.fromkeys(texts)) for name, texts in sets.items()}


def binary_samples(seed: int = 0) -> Iterator[tuple[str, str, bool]]:
    """(label, text, whether the bytes are text) of binary files' bytes, decoded the ways
    a question can arrive."""
    site = Path(sysconfig.get_paths()["purelib"])
    rng = random.Random(seed)
    for suffix in BINARY_SUFFIXES:
        files = sorted(p for p in site.rglob(f"*{suffix}") if p.is_file())
        for path in rng.sample(files, min(FILES_PER_SUFFIX, len(files))):
            data = path.read_bytes()
            for size in SIZES:
                if len(data) < size:
                    continue
                start = rng.randrange(0, len(data) - size + 1)
                for where, chunk in (("head", data[:size]), ("middle", data[start : start + size])):
                    for nul, sent in (("", chunk), (" no-NUL", chunk.replace(b"\x00", b""))):
                        for encoding, errors in (("utf-8", "replace"), ("latin-1", "strict")):
                            label = f"{path.name} {where} {size}B {encoding}{nul}"
                            yield label, sent.decode(encoding, errors), is_text(sent)


def is_text(data: bytes) -> bool:
    """Whether bytes are text by the usual test (valid UTF-8, no control byte besides
    whitespace), independent of `validate_question`: a docstring inside a `.pyc` or a
    symbol table of a `.so` without its NULs is text, so not a binary sample."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return not any((b < 0x20 and b not in b"\t\n\v\f\r") or b == 0x7F for b in data)


def _check(text: str) -> str | None:
    try:
        validate_question(text)
    except InvalidQuestionError as exc:
        return str(exc)
    return None


def _defuse_changes(text: str) -> int:
    """How many characters `defuse` changed; raises if it changed anything else."""
    out = defuse(text)
    if len(out) != len(text):
        raise AssertionError("defuse changed the length")
    changed = [i for i, (a, b) in enumerate(zip(text, out, strict=True)) if a != b]
    expected = {m.start() for m in _OWN_TAG.finditer(text)}
    if set(changed) != expected or any(out[i] != DEFUSED for i in changed):
        raise AssertionError(f"defuse changed more than our tags in {text[:80]!r}")
    return len(changed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--verbose", action="store_true", help="list each binary rejection")
    args = parser.parse_args()

    checked = too_long = 0
    false_rejections: list[tuple[str, str, str]] = []
    altered = changed_chars = with_lt = lt_count = 0
    for name, texts in questions(args.data).items():
        rejected = 0
        for text in texts:
            checked += 1
            reason = _check(text)
            if reason is not None and len(text.strip()) > MAX_QUESTION_CHARS:
                too_long += 1
            elif reason is not None:
                rejected += 1
                false_rejections.append((name, text, reason))
            changes = _defuse_changes(text)
            altered += changes > 0
            with_lt += "<" in text
            lt_count += text.count("<")
            changed_chars += changes
        print(f"  {name:26} {len(texts):6,} questions, {rejected} rejected")
    print(f"questions checked: {checked:,}")
    print(f"  longer than {MAX_QUESTION_CHARS:,} characters (length rule): {too_long}")
    print(f"  false rejections: {len(false_rejections)}")
    for name, text, reason in false_rejections:
        print(f"    [{name}] {reason}: {text[:120]!r}")
    print(
        f"  defuse: {with_lt:,} questions hold {lt_count:,} `<`; {altered} altered, "
        f"{changed_chars} characters changed, each the `<` of one of our tags"
    )

    samples = accepted = skipped = 0
    reasons: Counter[str] = Counter()
    for label, text, textual in binary_samples():
        if textual:
            skipped += 1
            continue
        samples += 1
        reason = _check(text)
        if reason is None:
            accepted += 1
            print(f"    binary accepted: {label}: {text[:60]!r}")
        else:
            reasons[re.sub(r"\d+", "N", reason)] += 1
            if args.verbose:
                print(f"    {label}: {reason}")
    print(f"binary samples: {samples:,} ({skipped} windows of binary files that are text skipped)")
    for reason, count in reasons.most_common():
        print(f"  {count:6,} × {reason}")
    print(f"  binary accepted: {accepted}")
    return 1 if false_rejections or accepted else 0


if __name__ == "__main__":
    sys.exit(main())
