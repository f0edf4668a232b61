"""The five StackEval rows of `stackeval.py`, served by the loopback Stack Exchange API."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeweaver_eval.stackexchange.corpus import Corpus
from codeweaver_eval.stackexchange.loopback import StackExchangeLoopback, serve_loopback
from tests.unit.codeweaver_eval.stackeval import FILE


@pytest.fixture
def stackeval_file(tmp_path: Path) -> Path:
    path = tmp_path / "stack-eval.jsonl"
    shutil.copyfile(FILE, path)
    return path


@pytest.fixture
def corpus(stackeval_file: Path) -> Corpus:
    return Corpus.load(stackeval_file)


@pytest.fixture
def loopback(corpus: Corpus) -> StackExchangeLoopback:
    return StackExchangeLoopback(corpus)


@pytest.fixture
def base_url(loopback: StackExchangeLoopback) -> Iterator[str]:
    with serve_loopback(loopback) as url:
        yield url
