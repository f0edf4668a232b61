"""Five real StackEval rows (`tests/fixtures/stackeval/stackeval5.jsonl`), the posts
the Stack Exchange stand-in serves in these tests.

Questions and accepted answers: Stack Overflow content via ProsusAI/stack-eval, CC BY-SA 4.0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FILE = Path(__file__).parents[2] / "fixtures" / "stackeval" / "stackeval5.jsonl"
ROWS: list[dict[str, Any]] = [
    json.loads(line) for line in FILE.read_text(encoding="utf-8").splitlines()
]

RUST_BINARY, C_ATOI, PYTHON_RANGE, PYTORCH_CPUS, NEXT_PORT = (r["questionId"] for r in ROWS)
