"""`evaluate_cache` and `load_pairs`: the real decision on pairs, sampling, inverted labels."""

from __future__ import annotations

from pathlib import Path

from codeweaver.config import Settings
from codeweaver.embeddings import create_embedder
from codeweaver_eval.cache_eval import evaluate_cache, load_pairs

TRANSLATIONS = {
    "문자열을 정수로 바꾸는 법": "How do I convert a string to an integer in Python?",
    "파이썬에서 문자열을 정수로 변환": "convert a string to an integer in Python",
    "정수를 문자열로 바꾸는 법": "How do I convert an integer to a string in Python?",
    # The model lost the numbers: both sides read the same, the originals do not.
    "헤어진지 3주": None,
    "헤어진지 4일": None,
}


async def translate(question: str) -> str | None:
    return TRANSLATIONS[question]


def write_korean_csv(path: Path) -> Path:
    rows = [
        ("문자열을 정수로 바꾸는 법", "파이썬에서 문자열을 정수로 변환", 0),  # 0 = same here
        ("문자열을 정수로 바꾸는 법", "정수를 문자열로 바꾸는 법", 1),
        ("헤어진지 3주", "헤어진지 4일", 1),
    ]
    lines = ["id,qid1,qid2,question1,question2,is_duplicate"]
    lines += [f"{i},{2 * i},{2 * i + 1},{a},{b},{label}" for i, (a, b, label) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


async def test_korean_pairs_through_translation(tmp_path: Path) -> None:
    pairs = load_pairs(write_korean_csv(tmp_path / "ko.csv"), invert_labels=True)
    assert [p.same for p in pairs] == [True, False, False]
    embedder = create_embedder("minilm", Settings(cache_dir=tmp_path))
    report = (await evaluate_cache(pairs, embedder, translate, threshold=0.7)).to_dict()
    assert report["hits"] == 1 and report["precision"] == 1.0 and report["recall"] == 1.0
    assert report["false_hit_rate"] == 0.0  # reversed direction and untrustworthy keys miss


async def test_no_hits_leaves_precision_undefined(tmp_path: Path) -> None:
    pairs = load_pairs(write_korean_csv(tmp_path / "ko.csv"), invert_labels=True)[1:]
    embedder = create_embedder("minilm", Settings(cache_dir=tmp_path))
    report = (await evaluate_cache(pairs, embedder, translate, threshold=0.7)).to_dict()
    assert report["hits"] == 0 and report["precision"] is None


def test_sample_is_reproducible_and_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        "".join(f'{{"q1": "q{i}", "q2": "p{i}", "label": {i % 2}}}\n' for i in range(50))
    )
    first = load_pairs(path, sample=10, seed=3)
    assert [p.line for p in first] == [p.line for p in load_pairs(path, sample=10, seed=3)]
    assert [p.line for p in first] == sorted(p.line for p in first)
    assert len(first) == 10 and len({p.line for p in first}) == 10
    assert [p.line for p in load_pairs(path, sample=10, seed=4)] != [p.line for p in first]
    assert len(load_pairs(path, sample=500)) == 50
