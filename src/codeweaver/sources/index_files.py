"""What the on-disk BM25 indexes of the docs sources share: atomic replacement, removal of
stale fingerprints, Lucene idf sums and the [0, 1) score mapping.

An index lives in a folder named by the first 32 hex digits of its fingerprint; a build
writes `.tmp-*` and is renamed into place, an index it replaces is moved to `.old-*` first.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

# The folders an index directory's own builds leave; anything else (project environments,
# a parse cache) belongs to someone else and is never removed.
INDEX_FOLDER = re.compile(r"[0-9a-f]{32}|\.old-.+|\.tmp-.+")
# A `.tmp-*` folder younger than this may be another process's build in progress.
BUILD_GRACE_SECONDS = 3600


def replace_index(tmp: Path, final: Path) -> None:
    """Move the new index into place atomically (an old or corrupt one moved aside first)."""
    trash: Path | None = None
    if final.exists():
        trash = final.with_name(f".old-{final.name[:12]}-{uuid.uuid4().hex[:8]}")
        os.replace(final, trash)
    os.replace(tmp, final)
    if trash is not None:
        shutil.rmtree(trash, ignore_errors=True)


def remove_other_indexes(index_dir: Path, keep: str) -> None:
    """Delete indexes of other fingerprints and leftovers of crashed builds."""
    now = time.time()
    try:
        children = list(index_dir.iterdir())
    except OSError:
        return
    for child in children:
        if child.name == keep or not child.is_dir() or not INDEX_FOLDER.fullmatch(child.name):
            continue
        if child.name.startswith(".tmp-"):
            try:
                if now - child.stat().st_mtime < BUILD_GRACE_SECONDS:
                    continue  # maybe another process is building right now
            except OSError:
                continue
        shutil.rmtree(child, ignore_errors=True)


def idf_sum(retriever: Any, vocab: Mapping[str, int], n_docs: int, tokens: Iterable[str]) -> float:
    """Sum of the (Lucene, as bm25s computes it) idf of the tokens; a token absent from the
    index has the highest idf (document frequency 0)."""
    indptr = retriever.scores["indptr"]
    total = 0.0
    for token in tokens:
        token_id = vocab.get(token)
        df = 0
        if token_id is not None and token_id + 1 < len(indptr):
            df = int(indptr[token_id + 1] - indptr[token_id])
        total += math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
    return total


def normalise_score(raw: float, half_point: float) -> float:
    """`raw / (raw + half_point)`: monotone in the BM25 score, in [0, 1), 0.5 at `half_point`
    (each source sets it as a share of the summed idf of the question's words)."""
    if raw <= 0:
        return 0.0
    return raw / (raw + max(half_point, 1e-9))
