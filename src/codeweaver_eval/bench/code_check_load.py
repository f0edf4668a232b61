"""Benchmark: the code check's first read of a package, with and without its test suites,
side by side in one run.

Each package is read by a fresh process (what `codeweaver ask` pays on its first code
block using it), alternately as the check reads it (test packages skipped) and with
griffe's own finder (every module), `--runs` times each; the medians and their ratio.

    .venv/bin/python -m codeweaver_eval.bench.code_check_load \
        --site DIR/.venv/lib/python3.11/site-packages pandas numpy sklearn django
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = """
import sys, time
from pathlib import Path
import griffe
from codeweaver.codecheck.api import ApiIndex
api = ApiIndex([Path(sys.argv[1])], python_version="3.11")
if sys.argv[3] == "all":
    api._loader.finder = griffe.ModuleFinder(api.search_paths)
started = time.perf_counter()
api.module(sys.argv[2])
print(time.perf_counter() - started)
"""


def _once(site: Path, package: str, variant: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(site), package, variant],
        capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, required=True, help="a site-packages folder")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("packages", nargs="+")
    args = parser.parse_args()
    print(f"{'package':<12} {'tests skipped':>14} {'every module':>13} {'ratio':>6}")
    for package in args.packages:
        skipped, every = [], []
        for _ in range(args.runs):
            skipped.append(_once(args.site, package, "skip"))
            every.append(_once(args.site, package, "all"))
        a, b = statistics.median(skipped), statistics.median(every)
        print(f"{package:<12} {a:>12.2f} s {b:>11.2f} s {a / b:>6.2f}")


if __name__ == "__main__":
    main()
