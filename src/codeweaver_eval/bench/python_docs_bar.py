"""How precise are the Python prose docs' results on real questions, bar by bar?

CoNaLa questions (`intent`, reference `snippet`s): a returned section is a *hit* when its
code (inline code and examples) names a function, method or class the reference snippets
use (`retrieval_names`: `open`, `readlines`, `str.split`…). For each bar on the score
(`--bars`), at the coverage bar of the index, prints: the share of questions that get a
result, the share of top-1 results that are hits, and of all returned results.

    .venv/bin/python -m codeweaver_eval.bench.python_docs_bar \
        --file ../shared/data/retrieval/conala/conala-train.json --part odd
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from codeweaver.sources.python_docs import PythonDocsSource
from codeweaver.sources.python_docs.sections import DocSection
from codeweaver_eval.retrieval_eval import load_questions, question_uses

_CODE = re.compile(r"```.*?```|`[^`\n]+`", re.DOTALL)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def code_names(section: DocSection) -> frozenset[str]:
    """Identifiers in the section's code spans and examples."""
    return frozenset(n for span in _CODE.findall(section.text) for n in _NAME.findall(span))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", required=True)
    parser.add_argument("--part", default="all", choices=["all", "even", "odd"])
    parser.add_argument("--bars", default="0.0,0.5,0.6,0.65,0.7,0.75,0.8")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--index", default="/tmp/codeweaver-bench-pydocs")
    parser.add_argument("--python", default=f"{sys.version_info[0]}.{sys.version_info[1]}")
    args = parser.parse_args()
    source = PythonDocsSource(Path(args.index), lambda: args.python)
    if not source.status().usable:
        print(source.status().reason)
        return 1
    index = source._ensure(lambda phase, done, total: None, retry=True)
    print(f"{index.info.section_count} sections of Python {index.info.docs_version}'s docs")
    questions = load_questions(args.file, part=args.part)
    known = frozenset(sys.stdlib_module_names) | {"builtins"}
    names_of: dict[int, frozenset[str]] = {}
    started = time.perf_counter()
    rows: list[tuple[list[tuple[float, bool]], bool]] = []
    for q in questions:
        used = {u.name.rpartition(".")[2] for u in question_uses(q, known)}
        used = {n for n in used if len(n) > 2}
        found = index.query(q.intent, args.k, min_score=0.0)
        judged = []
        for section, score in found:
            key = id(section)
            if key not in names_of:
                names_of[key] = code_names(section)
            judged.append((score, bool(used & names_of[key])))
        rows.append((judged, bool(used)))
    seconds = time.perf_counter() - started
    print(
        f"{len(questions)} questions ({args.part}), {seconds / len(questions) * 1000:.1f} ms each"
    )
    print(f"{'bar':>5} {'answered':>9} {'top-1 hit':>10} {'all hits':>9} {'results/q':>10}")
    for bar in (float(b) for b in args.bars.split(",")):
        kept = [[hit for score, hit in judged if score >= bar] for judged, _ in rows]
        answered = [k for k in kept if k]
        top1 = sum(k[0] for k in answered)
        total = sum(len(k) for k in kept)
        hits = sum(sum(k) for k in kept)
        print(
            f"{bar:>5.2f} {len(answered) / len(rows):>9.3f} "
            f"{top1 / max(len(answered), 1):>10.3f} {hits / max(total, 1):>9.3f} "
            f"{total / len(rows):>10.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
