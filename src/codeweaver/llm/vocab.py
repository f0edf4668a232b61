"""Which tokens of a GGUF's vocabulary write a script, for `logit_bias` to ban them.

The vocabulary is read from the GGUF's metadata with `gguf` (llama.cpp's own reader), once:
about 7 s for Qwen2.5's 151,936 tokens, then kept as a small JSON file beside the other
caches, keyed by the weights' size and modification time.
"""

from __future__ import annotations

import json
import logging
import os
import re
from functools import cache
from pathlib import Path

from codeweaver.llm.scripts import Script, writes_script

logger = logging.getLogger(__name__)

_FORMAT = 1
_SPM_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


@cache
def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level BPE alphabet: each printable stand-in character -> its byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    chars = list(printable)
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


def token_bytes(token: str, model: str) -> bytes:
    """The bytes a vocabulary entry writes, for GPT-2-style (`gpt2`) and SentencePiece
    (`llama`) vocabularies; other kinds are read as UTF-8 text."""
    if model == "gpt2":
        decoder = _byte_decoder()
        return bytes(decoder[c] for c in token if c in decoder)
    if model == "llama":
        found = _SPM_BYTE.fullmatch(token)
        if found:
            return bytes([int(found.group(1), 16)])
        return token.replace("\u2581", " ").encode("utf-8")
    return token.encode("utf-8")


def read_vocabulary(path: Path) -> tuple[str, list[str]]:
    """(tokenizer kind, tokens in id order) from a GGUF file's metadata."""
    from gguf import GGUFReader

    reader = GGUFReader(path)
    kind_field = reader.fields.get("tokenizer.ggml.model")
    kind = bytes(kind_field.parts[-1]).decode() if kind_field is not None else ""
    tokens = reader.fields["tokenizer.ggml.tokens"]
    return kind, [bytes(tokens.parts[i]).decode("utf-8", "replace") for i in tokens.data]


def _cache_file(path: Path, cache_dir: Path, script: Script) -> Path:
    return cache_dir / f"{path.stem}.{script}-tokens.json"


def script_token_ids(path: Path, script: Script, cache_dir: Path) -> list[int]:
    """Ids of the tokens of `path`'s vocabulary that write `script` ([] when unreadable)."""
    stat = path.stat()
    key = {"format": _FORMAT, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    cached = _cache_file(path, cache_dir, script)
    try:
        stored = json.loads(cached.read_text(encoding="utf-8"))
        if {k: stored.get(k) for k in key} == key and isinstance(stored.get("ids"), list):
            return [int(i) for i in stored["ids"]]
    except (OSError, ValueError):
        pass
    try:
        kind, tokens = read_vocabulary(path)
    except Exception as exc:  # an unreadable vocabulary: answer unsteered rather than fail
        logger.warning("cannot read the vocabulary of %s: %s", path, exc)
        return []
    ids = [i for i, token in enumerate(tokens) if writes_script(token_bytes(token, kind), script)]
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({**key, "ids": ids}), encoding="utf-8")
        os.replace(tmp, cached)
    except OSError as exc:
        logger.info("cannot keep the %s token ids in %s: %s", script, cache_dir, exc)
    return ids
