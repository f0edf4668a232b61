"""How often reference answers use each API: a prior for the APIs answers are made of.

`popularity` counts calls in the installed code, which says what libraries call, not what
answers to questions need: `re.sub`, `str.join` or `str.encode` answer many questions whose
words never name them. `ANSWER_USAGE` counts, per documented name, the CoNaLa questions (train
split, even `question_id`s only: the calibration part) whose reference snippets use it. A
name shared by several types counts for each (`str.split`, `bytes.split`). It is a feature
of the score model (`ranking`), fitted on the same questions; names it does not know count 0.

The counts are package data (`USAGE_FILE`, read on import), written by the measurement
package's docs-ranking calibration for the installed packages.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from codeweaver.sources.installed_docs.model import DocEntry

USAGE_SCALE = 4.0  # log1p(count) / USAGE_SCALE: about 1 for the most used names
USAGE_FILE = Path(__file__).with_name("data") / "answer_usage.json"


def _read_usage() -> dict[str, int]:
    counts = json.loads(USAGE_FILE.read_text(encoding="utf-8"))
    return {str(name): int(count) for name, count in counts.items()}


ANSWER_USAGE: Mapping[str, int] = _read_usage()


def usage_features(entries: Sequence[DocEntry]) -> NDArray[np.float64]:
    """`log1p(count) / USAGE_SCALE` per entry, by its name or an alias (0 when unknown)."""
    out = np.zeros(len(entries))
    for i, entry in enumerate(entries):
        count = max((ANSWER_USAGE.get(n, 0) for n in (entry.name, *entry.aliases)), default=0)
        out[i] = math.log1p(count) / USAGE_SCALE
    return out
