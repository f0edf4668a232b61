"""D11 + D15: `codeweaver` prints no escape sequence from outside data, and refuses
arguments that are not UTF-8 with a clear error instead of a traceback."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from codeweaver.agent.runner import RunEvent, RunResult
from codeweaver.agent.state import SearchResult, Step
from codeweaver.cli.app import app
from codeweaver.memory.cache import ExactAnswerCache

HOSTILE = "\x1b]0;HIJACK\x07\x1b[2J\x1b[31mRED\x1b[0m"
# A right-to-left override: "\u202elive" would show as "evil".
BIDI = "\u202elive\u202c"
# What may never reach the terminal from the data: the title change, the screen clear,
# the colour, the bell, a bidirectional override. (Rich's own cursor codes on a live
# terminal are not from data.)
FORBIDDEN = ("HIJACK", "\x1b]0;", "\x1b[2J", "\x1b[31m", "\x07", "\u202e", "\u202c")

SOURCE: SearchResult = {
    # Also an 8-bit CSI and a lone surrogate (an undecodable byte), which JSON keeps raw.
    "title": f"sorting {HOSTILE} howto\x9b31m\udcff {BIDI} <img src=x onerror=alert(1)>",
    "url": f"https://docs.example/sort{HOSTILE}",
    "snippet": "sorted() returns a new list",
    "source": "web",
    "score": 0.9,
    "reference": f"ref{HOSTILE}",
    "attribution": f"by {HOSTILE}",
}
ANSWER = f"Use `sorted()` {HOSTILE} [1].\n\n```python\nprint('{HOSTILE}')\n```\n"
STEP: Step = {
    "id": "s1",
    "node": f"search_web{HOSTILE}",
    "kind": "act",
    "message": f"query {HOSTILE}",
}


class FakeAssistant:
    """Answers every question with the hostile answer and source."""

    def __init__(self) -> None:
        self.threads: list[str | None] = []

    def _result(self, question: str, thread: str | None) -> RunResult:
        self.threads.append(thread)
        return RunResult(thread or "t1", question, ANSWER, [SOURCE], [STEP], None, None)

    async def ask(self, question: str, thread: str | None = None, mode: str = "") -> RunResult:
        return self._result(question, thread)

    async def stream(
        self, question: str, thread: str | None = None, mode: str = ""
    ) -> AsyncIterator[RunEvent]:
        yield RunEvent("step", step=STEP, node=STEP["node"])
        yield RunEvent("token", text=HOSTILE)
        yield RunEvent("result", result=self._result(question, thread))

    stream_checked = stream  # what the service runs


@pytest.fixture
def assistant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeAssistant:
    fake = FakeAssistant()
    monkeypatch.setenv("CODEWEAVER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CODEWEAVER_MODEL", "scripted:echo")
    monkeypatch.setenv("CODEWEAVER_SOURCES", "none")
    monkeypatch.chdir(tmp_path)
    # The assistant the service runs for `ask` and `chat`.
    monkeypatch.setattr("codeweaver.agent.runner.Assistant", lambda *args, **kwargs: fake)
    return fake


def _clean(text: str) -> None:
    for bad in FORBIDDEN:
        assert bad not in text, f"{bad!r} reached the terminal"


def test_piped_answer_and_sources_carry_no_escape(assistant: FakeAssistant) -> None:
    result = CliRunner().invoke(app, ["ask", "How do I sort a list?"])
    assert result.exit_code == 0, result.output
    _clean(result.stdout)
    assert "\x1b" not in result.stdout
    assert "Use `sorted()` RED [1]." in result.stdout
    title = "sorting RED howto\ufffd live <img src=x onerror=alert(1)>"
    assert f"[1] {title} https://docs.example/sortRED (refRED) — by RED" in result.stdout


def test_terminal_answer_steps_and_sources_carry_no_escape(
    assistant: FakeAssistant, monkeypatch: pytest.MonkeyPatch
) -> None:
    def tty(stderr: bool = False) -> Console:
        # A terminal without colours: every escape in the output would come from the data.
        return Console(stderr=stderr, force_terminal=True, color_system=None, width=200)

    monkeypatch.setattr("codeweaver.cli.app._console", tty)
    result = CliRunner().invoke(app, ["ask", "How do I sort a list?"])
    assert result.exit_code == 0, result.output
    _clean(result.stdout)
    _clean(result.stderr)
    # The steps in words on stderr, the draft under them; no node name, no raw data.
    assert "Understanding the question" in result.stderr and "search_web" not in result.stderr
    assert "RED" in result.stderr  # the draft, as it streamed
    assert "sorting RED howto" in result.stdout and "live" in result.stdout


def test_json_output_keeps_the_data_and_no_raw_control(assistant: FakeAssistant) -> None:
    result = CliRunner().invoke(app, ["ask", "How do I sort a list?", "--json"])
    assert result.exit_code == 0, result.output
    assert not {"\x1b", "\x07", "\x9b", "\udcff", "\u202e"} & set(result.stdout)
    payload = json.loads(result.stdout)
    assert payload["sources"][0]["title"] == SOURCE["title"]  # escaped, not lost


def test_chat_thread_id_and_markup_are_printed_inert(assistant: FakeAssistant) -> None:
    # A conversation id is a session id of the service: this one is refused, as typed.
    thread = f"[bold]{HOSTILE}"
    result = CliRunner().invoke(app, ["chat", "--thread", thread], input="/exit\n")
    assert result.exit_code == 2, result.output
    _clean(result.stdout)
    _clean(result.stderr)
    shown = " ".join(result.stderr.split())  # however wrapped
    assert "--thread '[bold]RED': a conversation id is" in shown  # markup shown, not applied


def test_cached_questions_are_listed_inert(
    assistant: FakeAssistant, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEWEAVER_CACHE_MODE", "exact")
    store = ExactAnswerCache(tmp_path / "data" / "answer_cache.sqlite")
    store.store(f"What is [red]a venv{HOSTILE}?", "An isolated environment.", [], "m")
    result = CliRunner().invoke(app, ["cache", "list"])
    assert result.exit_code == 0, result.output
    _clean(result.stdout)
    assert "What is [red]a venvRED?" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["ask", "How do I reverse a list?", "--thread", "id\udcff"],
        ["ask", "How do I sort a list \udcff\udcfe in Python"],
        ["ask", "How?", "--thread=\udcc3x"],
        ["cache", "forget", "caf\udce9"],
    ],
)
def test_arguments_that_are_not_utf8_are_refused(assistant: FakeAssistant, args: list[str]) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "is not valid UTF-8 text" in " ".join(result.stderr.split())  # however wrapped
    assert isinstance(result.exception, SystemExit)  # no traceback
    assert assistant.threads == []  # nothing was answered


def test_chat_help_is_a_command_not_a_question(assistant: FakeAssistant) -> None:
    result = CliRunner().invoke(app, ["chat"], input="/help\n/hepl\n/exit\n")
    assert result.exit_code == 0, result.output
    assert "/new" in result.stdout and "/exit" in result.stdout and "Ctrl-C" in result.stdout
    assert "unknown command /hepl" in result.stdout
    assert assistant.threads == []  # neither reached the model


def test_chat_line_that_is_not_utf8_is_refused(assistant: FakeAssistant) -> None:
    result = CliRunner().invoke(app, ["chat"], input=b"caf\xe9 ok?\n/exit\n")
    assert result.exit_code == 0, result.output
    assert "that line is not valid UTF-8 text" in result.stdout
    assert assistant.threads == []
