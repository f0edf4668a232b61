"""The installed `codeweaver` command, run as a user would, output piped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# The console script installed beside this interpreter (the project's own venv).
EXE = Path(sys.executable).with_name("codeweaver")


def test_console_script_is_installed() -> None:
    assert EXE.is_file(), f"{EXE} missing: install the project with pip install -e ."


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "CODEWEAVER_DATA_DIR": str(tmp_path / "data"),
        "CODEWEAVER_CACHE_DIR": str(tmp_path / "cache"),
        "CODEWEAVER_MODEL": "scripted:echo",
        "CODEWEAVER_SOURCES": "none",
    }
    return subprocess.run(
        [str(EXE), *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )


def test_piped_answer_is_plain_text(tmp_path: Path) -> None:
    done = run(tmp_path, "ask", "How do I parse JSON in Python?")
    assert done.returncode == 0, done.stderr
    # No source is enabled: the plain answer opens by saying so, then the model's text.
    first, _, rest = done.stdout.partition("\n\n")
    assert first == "_No source was found: this answer comes from the model's general knowledge._"
    assert rest.startswith("Scripted answer to: How do I parse JSON in Python?")
    assert "\x1b[" not in done.stdout  # no terminal escapes when piped


def test_too_many_json(tmp_path: Path) -> None:
    done = run(tmp_path, "ask", "JWT? CORS? Docker?", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["plan_case"] == "too_many"
    nodes = [s["node"] for s in payload["steps"]]
    assert nodes == ["route_query", "create_plan", "handle_too_many_questions"]


def test_empty_question_exits_2_with_message(tmp_path: Path) -> None:
    done = run(tmp_path, "ask", "  ")
    assert done.returncode == 2
    assert "the question is empty" in done.stderr
    assert "Traceback" not in done.stderr


def test_chat_reads_turns_from_stdin(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "CODEWEAVER_DATA_DIR": str(tmp_path / "data"),
        "CODEWEAVER_CACHE_DIR": str(tmp_path / "cache"),
        "CODEWEAVER_MODEL": "scripted:echo",
        "CODEWEAVER_SOURCES": "none",
    }
    done = subprocess.run(
        [str(EXE), "chat", "--thread", "t-e2e"],
        input="What is a venv?\n/exit\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Scripted answer to: What is a venv?" in done.stdout
