"""Assembling GGUF weights from part packages: order, hash check, clear errors."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from codeweaver.llm.weights import WeightsError, WeightsSpec, ensure_weights, weights_status

PARTS = [b"GGUF-part-one|", b"part-two|", b"part-three"]


def fake_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefix: str, parts: list[bytes]
) -> WeightsSpec:
    site = tmp_path / "site"
    for index, payload in enumerate(parts, 1):
        package = site / f"{prefix}{index}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{index:02d}.bin").write_bytes(payload)
    monkeypatch.syspath_prepend(str(site))
    for name in list(sys.modules):
        if name.startswith(prefix):
            del sys.modules[name]
    whole = b"".join(PARTS)
    return WeightsSpec(
        alias="toy",
        filename="toy.gguf",
        module_prefix=prefix,
        dist_prefix="toy-part",
        dist_version="1.0",
        parts=len(PARTS),
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
    )


def test_assembles_in_order_and_verifies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = fake_parts(tmp_path, monkeypatch, "cwtoy_ok_part", PARTS)
    seen: list[tuple[int, int]] = []
    path = ensure_weights(spec, tmp_path / "models", lambda d, t: seen.append((d, t)))
    assert path.read_bytes() == b"".join(PARTS)
    assert seen[-1] == (spec.size, spec.size)
    assert "assembled" in weights_status(spec, tmp_path / "models")
    # Second call reuses the verified file without reading the parts again.
    mtime = path.stat().st_mtime_ns
    assert ensure_weights(spec, tmp_path / "models") == path
    assert path.stat().st_mtime_ns == mtime


def test_missing_part_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = fake_parts(tmp_path, monkeypatch, "cwtoy_missing_part", PARTS[:2])
    with pytest.raises(WeightsError, match=r"part 3/3 .*'toy-part3==1.0'"):
        ensure_weights(spec, tmp_path / "models")
    assert not (tmp_path / "models" / "toy.gguf").exists()


def test_bad_hash_is_reported_and_nothing_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corrupted = [PARTS[0], b"part-twX|", PARTS[2]]
    spec = fake_parts(tmp_path, monkeypatch, "cwtoy_bad_part", corrupted)
    with pytest.raises(WeightsError, match=f"expected {spec.sha256}"):
        ensure_weights(spec, tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


def test_size_mismatch_is_caught_before_copying(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = fake_parts(tmp_path, monkeypatch, "cwtoy_short_part", [PARTS[0], b"x", PARTS[2]])
    with pytest.raises(WeightsError, match="add up to"):
        ensure_weights(spec, tmp_path / "models")
