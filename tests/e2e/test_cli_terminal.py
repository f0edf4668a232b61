"""`codeweaver ask` on a real pseudo-terminal: the draft streams before the checked
answer, and Ctrl-C during the model's call stops the command at once and says so."""

from __future__ import annotations

import os
import pty
import select
import sys
import time
from pathlib import Path

import pytest

EXE = Path(sys.executable).with_name("codeweaver")
QUESTION = "How do I parse JSON in Python?"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX terminal")


class Terminal:
    """`codeweaver ask QUESTION` with a pseudo-terminal as its controlling terminal."""

    def __init__(self, tmp_path: Path, model: str) -> None:
        env = {
            **os.environ,
            "CODEWEAVER_DATA_DIR": str(tmp_path / "data"),
            "CODEWEAVER_CACHE_DIR": str(tmp_path / "cache"),
            "CODEWEAVER_MODEL": model,
            "CODEWEAVER_SOURCES": "none",
            "TERM": "xterm-256color",
            "COLUMNS": "100",
            "LINES": "40",
        }
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the terminal's session leader
            os.chdir(tmp_path)
            os.execve(str(EXE), [str(EXE), "ask", QUESTION, "--no-cache"], env)
        self.output = b""

    def read_until(self, text: bytes, timeout: float) -> bool:
        """Read until `text` appears (True) or the command ends or times out (False)."""
        deadline = time.monotonic() + timeout
        while text not in self.output and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:  # the command ended and closed the terminal
                    return False
                if not data:
                    return False
                self.output += data
        return text in self.output

    def wait(self, timeout: float) -> int | None:
        """The exit code, or None if the command is still running after `timeout`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.read_until(b"\0never\0", 0.05)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
        return None

    def kill(self) -> None:
        try:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)


def test_the_draft_streams_before_the_checked_answer(tmp_path: Path) -> None:
    term = Terminal(tmp_path, "scripted:echo")
    try:
        assert term.wait(120) == 0, term.output.decode(errors="replace")
    finally:
        term.kill()
    shown = term.output.decode(errors="replace")
    # The draft's words appear one by one in the live region (the echo model streams a
    # word at a time), before the checked answer, which alone carries the notice.
    first_word = shown.index("Scripted ")
    whole_draft = shown.index(f"Scripted answer to: {QUESTION}")
    notice = shown.index("No source was found")
    assert first_word < whole_draft < notice
    assert "Understanding the question" in shown and "Writing the answer" in shown
    assert "generate_answer" not in shown  # steps in words, no node names


def test_ctrl_c_during_the_model_call_stops_within_two_seconds(tmp_path: Path) -> None:
    # The model takes a minute to answer, in a worker thread nothing can interrupt.
    term = Terminal(tmp_path, "scripted:echo@60s")
    try:
        assert term.read_until(b"Writing the answer", 120), term.output.decode(errors="replace")
        time.sleep(0.5)  # into the model's call
        os.write(term.fd, b"\x03")  # Ctrl-C, as the terminal sends it
        pressed = time.monotonic()
        code = term.wait(10)
        took = time.monotonic() - pressed
    finally:
        term.kill()
    assert code == 130, term.output.decode(errors="replace")
    assert took < 2.0
    assert b"Stopped: the answer was cancelled." in term.output
