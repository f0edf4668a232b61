"""The `codeweaver` command: light start-up, JSON output, plain output, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from codeweaver.cli.app import app
from codeweaver.memory.cache import ExactAnswerCache

HEAVY = ("langgraph", "langchain_core", "xllamacpp", "numpy", "bm25s")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {
        "CODEWEAVER_DATA_DIR": str(tmp_path / "data"),
        "CODEWEAVER_CACHE_DIR": str(tmp_path / "cache"),
        "CODEWEAVER_MODEL": "scripted:echo",
        # Sources have their own tests: no network, and no index build that would be slow.
        "CODEWEAVER_SOURCES": "none",
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)  # no stray .env
    return values


def test_help_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys\n"
        "from codeweaver.cli.app import app\n"
        "try:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert "ask" in out.stdout and "doctor" in out.stdout


def test_ask_json_too_many_by_guard(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args: object, **kwargs: object) -> object:
        raise AssertionError("the model must not be called for the guard")

    monkeypatch.setattr("codeweaver.llm.scripted.ScriptedChatModel._generate", never)
    result = CliRunner().invoke(app, ["ask", "JWT? CORS? Docker?", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["plan_case"] == "too_many"
    assert "Docker?" in payload["answer"]


def test_ask_plain_output_lists_sources(env: dict[str, str]) -> None:
    result = CliRunner().invoke(app, ["ask", "How do I parse JSON in Python?", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "Scripted answer to: How do I parse JSON in Python?" in result.stdout


def test_threads_persist_between_commands(env: dict[str, str]) -> None:
    runner = CliRunner()
    first = json.loads(runner.invoke(app, ["ask", "What is a venv?", "--json", "-t", "t1"]).stdout)
    assert first["thread_id"] == "t1"
    second = runner.invoke(app, ["ask", "How do I create one?", "--json", "-t", "t1"])
    assert second.exit_code == 0
    threads = Path(env["CODEWEAVER_DATA_DIR"]) / "threads.sqlite"
    assert threads.is_file() and threads.stat().st_size > 0


@pytest.mark.parametrize("question", ["", "   ", "x" * 9001])
def test_bad_question_is_a_clear_error(env: dict[str, str], question: str) -> None:
    result = CliRunner().invoke(app, ["ask", question])
    assert result.exit_code == 2
    assert "error:" in result.stderr and "question" in result.stderr


def test_unknown_provider_is_a_clear_error(env: dict[str, str]) -> None:
    result = CliRunner().invoke(app, ["ask", "What is a venv?", "--model", "nope:model"])
    assert result.exit_code == 2
    assert "unknown model provider 'nope'" in result.stderr


def test_missing_gguf_is_a_clear_error(env: dict[str, str], tmp_path: Path) -> None:
    missing = tmp_path / "absent.gguf"
    result = CliRunner().invoke(app, ["ask", "What is a venv?", "--model", f"local:{missing}"])
    assert result.exit_code == 2
    assert "GGUF file not found" in result.stderr


def test_doctor_json_never_shows_key_values(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secretvalue123")
    monkeypatch.setenv("CODEWEAVER_SOURCES", "stackoverflow,github")
    result = CliRunner().invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    assert "ghp_secretvalue123" not in result.stdout
    report = json.loads(result.stdout)
    assert report["keys"]["GITHUB_TOKEN"] is True
    assert report["keys"]["TAVILY_API_KEY"] is False
    assert report["sources"]["github"] == "ready"  # the token is set
    assert report["sources"]["stackoverflow"] == "ready"  # no key needed
    assert report["sources"]["tavily_docs"] == "skipped: disabled by CODEWEAVER_SOURCES"


def test_doctor_names_the_stores_the_service_would_open(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEWEAVER_CACHE_MODE", raising=False)
    report = json.loads(CliRunner().invoke(app, ["doctor", "--json"]).stdout)
    stores = report["stores"]
    assert stores["answer_cache"].startswith("semantic (")  # the default, not "exact match"
    assert stores["rate_limit"] == "in memory"
    monkeypatch.setenv("CODEWEAVER_CACHE_MODE", "exact")
    monkeypatch.setenv("CODEWEAVER_REDIS_URL", "redis://:hunter2@127.0.0.1:1/0")  # never reached
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:hunter2@db/x")
    result = CliRunner().invoke(app, ["doctor", "--json"])
    stores = json.loads(result.stdout)["stores"]
    assert stores["answer_cache"].startswith("exact match (sqlite)")
    assert stores["rate_limit"] == "redis (CODEWEAVER_REDIS_URL)"
    assert stores["threads"] == "postgresql (DATABASE_URL)"
    assert "hunter2" not in result.stdout


def test_cache_commands(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEWEAVER_CACHE_MODE", "exact")
    runner = CliRunner()
    store = ExactAnswerCache(Path(env["CODEWEAVER_DATA_DIR"]) / "answer_cache.sqlite")
    store.store("What is a venv?", "An isolated environment.", [], "scripted:echo")
    listed = runner.invoke(app, ["cache", "list"])
    assert "What is a venv?" in listed.stdout
    assert runner.invoke(app, ["cache", "forget", "what is a venv"]).exit_code == 0
    assert runner.invoke(app, ["cache", "forget", "what is a venv"]).exit_code == 1
    assert "entries: 0" in runner.invoke(app, ["cache", "stats"]).stdout


def test_semantic_cache_commands_and_a_corrupted_store(env: dict[str, str]) -> None:
    from codeweaver.config import Settings
    from codeweaver.memory.caches import build_cache
    from codeweaver.memory.store_clients import close_shared_clients

    runner = CliRunner()
    build_cache(Settings()).store("How do I convert a string to an int in Python?", "a", [], "m")
    assert "string to an int" in runner.invoke(app, ["cache", "list"]).stdout
    # A paraphrase forgets the entry a lookup of it would serve.
    forgot = runner.invoke(app, ["cache", "forget", "how to convert a string to integer in python"])
    assert forgot.exit_code == 0, forgot.output
    assert "entries: 0" in runner.invoke(app, ["cache", "stats"]).stdout
    close_shared_clients()
    store = Path(env["CODEWEAVER_DATA_DIR"]) / "qdrant"
    storage = next(store.glob("collection/*/storage.sqlite"))
    storage.write_bytes(b"garbage")
    broken = runner.invoke(app, ["cache", "stats"])
    assert broken.exit_code == 2
    assert "left untouched" in " ".join(broken.stderr.split())
    assert broken.exception is None or isinstance(broken.exception, SystemExit)
    close_shared_clients()


def test_eval_split_json(env: dict[str, str]) -> None:
    fixture = Path(__file__).parents[2] / "fixtures" / "split_sample.jsonl"
    result = CliRunner().invoke(app, ["eval", "split", "--file", str(fixture), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["total"] == 13
    assert set(report["per_case"]) == {"single_topic", "multiple_questions", "too_many"}


def test_eval_intent_reports_accuracy(env: dict[str, str], tmp_path: Path) -> None:
    data = tmp_path / "intent.jsonl"
    rows = [
        {"question": "Why does this raise KeyError?", "questionMetadata": {"type": "debugging"}},
        {"question": "How do I merge dicts?", "questionMetadata": {"type": "implementation"}},
    ]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = CliRunner().invoke(app, ["eval", "intent", "--file", str(data), "--json"])
    assert result.exit_code == 0, result.output
    # The pipeline's rules read the quoted error: both right.
    assert json.loads(result.stdout)["accuracy"] == 1.0
    by_model = ["eval", "intent", "--file", str(data), "--json", "--by", "model"]
    result = CliRunner().invoke(app, by_model)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    # scripted:echo always answers "learning": one of two right.
    assert report["accuracy"] == 0.5
    assert report["per_class"]["learning"]["recall"] == 1.0


def test_eval_malformed_file_names_the_line(env: dict[str, str], tmp_path: Path) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text('{"question": "ok", "intent": "learning"}\n{not json\n')
    result = CliRunner().invoke(app, ["eval", "intent", "--file", str(data)])
    assert result.exit_code == 2
    assert ":2:" in result.stderr


def test_eval_cache_reports_false_hits(env: dict[str, str], tmp_path: Path) -> None:
    data = tmp_path / "pairs.jsonl"
    rows = [
        {
            "q1": "convert a string to an integer",
            "q2": "convert string to int",
            "label": 1,
            "kind": "positive",
        },
        {
            "q1": "convert a string to an integer",
            "q2": "convert an integer to a string",
            "label": 0,
            "kind": "hard_neg",
        },
        {"q1": "reverse a list", "q2": "bake a chocolate cake", "label": 0, "kind": "rand_neg"},
    ]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = CliRunner().invoke(app, ["eval", "cache", "--pairs", str(data), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["pairs"] == 3
    assert report["by_kind"]["positive"]["recall"] == 1.0
    assert report["by_kind"]["hard_neg"]["false_hit_rate"] == 0.0
    assert report["false_hit_rate"] == 0.0


def test_eval_cache_bad_label_names_the_line(env: dict[str, str], tmp_path: Path) -> None:
    data = tmp_path / "pairs.jsonl"
    data.write_text('{"q1": "a", "q2": "b", "label": 1}\n{"q1": "a", "q2": "b", "label": 7}\n')
    result = CliRunner().invoke(app, ["eval", "cache", "--pairs", str(data)])
    assert result.exit_code == 2
    assert ":2:" in result.stderr and "label" in result.stderr


def test_serve_refuses_to_expose_without_a_token(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the server must not start")

    monkeypatch.setattr("uvicorn.Server.run", never)
    monkeypatch.setattr("codeweaver.cli.common.bind", never)  # not even for a moment
    monkeypatch.delenv("CODEWEAVER_API_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert "without CODEWEAVER_API_TOKEN" in message and "127.0.0.1" in message


def test_is_loopback() -> None:
    from codeweaver.api.auth import TokenTable, check_binding, is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    assert not is_loopback("example.com")
    # A token of 16 characters or more makes it acceptable.
    check_binding("0.0.0.0", TokenTable.from_pairs({"a-token-of-16-chars": "default"}))
    check_binding("127.0.0.1", TokenTable.from_pairs({}))
