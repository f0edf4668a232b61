"""Where the benchmarks and builders find the repository and the shared data sets: they
run from a checkout (an editable install), the public data beside it in `../shared/data`."""

from __future__ import annotations

from pathlib import Path

# src/codeweaver_eval/repository.py: two folders below the checkout's root.
ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = ROOT.parent / "shared" / "data"
