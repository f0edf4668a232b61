"""Benchmark: the local code source's relevance bar, false results against found ones.

- False results: the StackEval questions the rules call debugging or code review (the
  only ones the pipeline searches local code for), searched in folders whose code they are not about
  (`--folder`, repeatable: this checkout, a clone of another project). A question with any
  result above the bar would put unrelated code in the prompt.
- Found: a git repository's fix commits (`--repo`, e.g. a clone of pallets/click): the
  subject is the question, the code is the parent commit's tree, and the files the commit
  changed under `--src` are the relevant ones. A commit counts when one of the top 5
  results is in a changed file.

Each bar is printed with and without the anchor rule (a hit must define a name asked
about or hold one of the question's identifiers or quoted phrases whole).

    .venv/bin/python -m codeweaver_eval.bench.local_code_bar --folder . --folder ../click \\
        --repo ../click --src src/click/,click/ [--commits 80]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codeweaver.agent.rules.intent import rule_intent
from codeweaver.agent.rules.queries import query_variations, search_form
from codeweaver.sources.code_scan import (
    LineHit,
    extract_terms,
    list_files,
    match_text,
    rank_lines,
    read_text,
)
from codeweaver.sources.languages import foreign_code, is_foreign
from codeweaver_eval.repository import ROOT, SHARED_DATA

STACKEVAL = SHARED_DATA / "intent" / "stackeval" / "stack-eval.jsonl"
BARS = (0.13, 0.3, 0.4, 0.45, 0.5, 0.6)
TOP = 5
FIX = re.compile(r"\b(fix|fixes|fixed|bug|error|crash|wrong|incorrect|broken|doesn't|fail)", re.I)
# Subjects that name no behaviour a user would ask about.
NOT_A_QUESTION = re.compile(
    r"typo|docs?\b|documentation|docstring|changelog|test|\bci\b|lint|flake|mypy|pyright|"
    r"typing|release|pep8|import|style\b|^fix formatting|^fix(ed)?( an)? (issue|bug)s?\.?$",
    re.IGNORECASE,
)


@dataclass
class Case:
    query: str
    folder: Path
    relevant: frozenset[str] = frozenset()  # paths relative to `folder`


def hits(folder: Path, question: str) -> list[LineHit]:
    """The ranked hits of every query form the pipeline would send for `question`."""
    listing = list_files(folder, 5000, time.monotonic() + 30)
    found: list[LineHit] = []
    for query in query_variations(search_form(question), question, None):
        terms = extract_terms(query)
        if not terms:
            continue
        foreign, matches, read = foreign_code(query), [], 0
        for path in listing.files:
            if is_foreign(path, foreign) or (text := read_text(path)) is None:
                continue
            read += 1
            if (fm := match_text(path, text, terms)) is not None:
                matches.append(fm)
        found += rank_lines(matches, terms, read)
    return sorted(found, key=lambda hit: -hit.score)


def stackeval_cases(path: Path, folders: list[Path]) -> list[Case]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    questions = [r["question"] for r in rows if rule_intent(r["question"]) != "learning"]
    return [Case(q, folder) for folder in folders for q in questions]


def commit_cases(repo: Path, src: str, limit: int, work: Path) -> list[Case]:
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "--no-merges", "--format=@%H\t%s", "--name-only"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    prefixes = tuple(src.split(","))
    commits: list[tuple[str, str, list[str]]] = []
    for line in log.splitlines():
        if line.startswith("@"):
            sha, _, subject = line[1:].partition("\t")
            commits.append((sha, subject, []))
        elif line.strip() and commits:
            commits[-1][2].append(line.strip())
    chosen = [
        (sha, subject, changed)
        for sha, subject, files in commits
        if FIX.search(subject) and not NOT_A_QUESTION.search(subject)
        if 0 < len(changed := [f for f in files if f.startswith(prefixes) and f[-3:] == ".py"]) < 4
    ]
    random.Random(1).shuffle(chosen)
    cases = []
    for sha, subject, changed in chosen[:limit]:
        tree = work / sha[:12]
        tree.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", f"{sha}^"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        cases.append(Case(subject, tree, frozenset(changed)))
    return cases


def rule(bar: float, anchored: bool) -> Callable[[LineHit], bool]:
    return lambda hit: hit.score >= bar and (hit.anchored or not anchored)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=STACKEVAL)
    parser.add_argument("--folder", type=Path, action="append", default=[])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--src", default="src/", help="changed files under these count (a,b)")
    parser.add_argument("--commits", type=int, default=80)
    args = parser.parse_args()
    folders = [folder.resolve() for folder in args.folder or [ROOT]]
    with tempfile.TemporaryDirectory() as work:
        unrelated = [(c, hits(c.folder, c.query)) for c in stackeval_cases(args.file, folders)]
        fixes = [
            (case, hits(case.folder, case.query))
            for case in commit_cases(args.repo, args.src, args.commits, Path(work))
        ]
    per_folder = len(unrelated) // len(folders)
    print(f"{per_folder} StackEval debugging questions per folder; {len(fixes)} fix commits")
    for anchored in (False, True):
        for bar in BARS:
            keep = rule(bar, anchored)
            false = [
                sum(any(keep(h) for h in found) for case, found in unrelated if case.folder == f)
                for f in folders
            ]
            found = sum(
                any(str(h.path.relative_to(case.folder)) in case.relevant for h in kept[:TOP])
                for case, found_hits in fixes
                if (kept := [h for h in found_hits if keep(h)])
            )
            shown = ", ".join(
                f"{n}/{per_folder} in {f.name}" for n, f in zip(false, folders, strict=True)
            )
            print(
                f"anchored={anchored!s:5} bar {bar:.2f}: questions with a false result: "
                f"{shown}; fix commits finding a changed file: {found}/{len(fixes)}"
            )


if __name__ == "__main__":
    main()
