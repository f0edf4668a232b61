"""Reading one file: text encodings by byte order mark (D18), and never opening anything
but a regular file (D17)."""

from __future__ import annotations

import codecs
import os
import random
from pathlib import Path

import pytest

from codeweaver.kb.loaders import LoadError, load_document
from codeweaver.kb.scan import NOT_REGULAR
from tests.unit.kb.helpers import within

TEXT = "# Café notes\n\nThe staging database is called lyra — ünïcödé.\n"


@pytest.mark.parametrize(
    ("encoding", "bom"),
    [
        ("utf-16-le", codecs.BOM_UTF16_LE),
        ("utf-16-be", codecs.BOM_UTF16_BE),
        ("utf-32-le", codecs.BOM_UTF32_LE),
        ("utf-32-be", codecs.BOM_UTF32_BE),
        ("utf-8", codecs.BOM_UTF8),
    ],
)
def test_text_with_a_byte_order_mark_is_decoded(tmp_path: Path, encoding: str, bom: bytes) -> None:
    path = tmp_path / "notes.md"
    path.write_bytes(bom + TEXT.encode(encoding))
    doc = load_document(path)
    assert doc.text == TEXT and doc.title == "Café notes"


def test_iconv_style_utf16(tmp_path: Path) -> None:
    # What `iconv -t utf-16` writes: a BOM, then UTF-16 in the machine's byte order.
    path = tmp_path / "notes.txt"
    path.write_bytes(TEXT.encode("utf-16"))
    assert load_document(path).text == TEXT


def test_text_without_a_bom_stays_utf8_or_legacy(tmp_path: Path) -> None:
    path = tmp_path / "plain.md"
    path.write_bytes(TEXT.encode("utf-8"))
    assert load_document(path).text == TEXT
    path.write_bytes(TEXT.encode("utf-16-le"))  # no BOM: NUL bytes, so binary
    with pytest.raises(LoadError, match=r"^binary file$"):
        load_document(path)


@pytest.mark.parametrize(
    "data",
    [
        codecs.BOM_UTF16_LE + random.Random(0).randbytes(4096),  # lone surrogates
        codecs.BOM_UTF16_LE + b"\x00" * 200,  # NUL characters
        codecs.BOM_UTF16_BE + "".join(chr(i % 32) for i in range(400)).encode("utf-16-be"),
        codecs.BOM_UTF32_LE + b"\xff" * 64,  # beyond U+10FFFF
    ],
    ids=["random", "nul", "controls", "bad-utf32"],
)
def test_binary_behind_a_bom_is_still_binary(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "blob.txt"
    path.write_bytes(data)
    with pytest.raises(LoadError, match=r"^binary file$"):
        load_document(path)


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "p.md"
    os.mkfifo(fifo)

    def load() -> str:
        try:
            load_document(fifo)
        except LoadError as exc:
            return str(exc)
        return "loaded"

    assert within(10, load, [fifo]) == NOT_REGULAR


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_device_behind_a_symlink_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "endless.txt"
    link.symlink_to("/dev/zero")  # reading it would never end
    with pytest.raises(LoadError, match=f"^{NOT_REGULAR}$"):
        load_document(link)


def test_symlink_is_refused_when_not_followed(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text(TEXT)
    link = tmp_path / "link.md"
    link.symlink_to("real.md")
    assert load_document(link).text == TEXT  # a path the caller chose: followed
    with pytest.raises(LoadError, match=r"^is a symlink$"):
        load_document(link, follow_symlinks=False)
