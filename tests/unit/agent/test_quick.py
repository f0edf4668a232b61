"""The command line's quick decline says exactly what the pipeline says, on real messages:
the 1,525 joined and single messages built from StackEval, CoNaLa and the Korean sets
(tests/fixtures/split), and it is never used where the pipeline would do anything else."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codeweaver.agent.quick import cached_by_rules, declined_by_rules
from codeweaver.agent.runner import Assistant
from tests.fakes import make_deps

SPLIT = Path(__file__).parents[2] / "fixtures" / "split"


def messages() -> list[str]:
    rows = [
        json.loads(line)
        for name in ("joined.jsonl", "single_real.jsonl")
        for line in (SPLIT / name).read_text(encoding="utf-8").splitlines()
    ]
    return [row["message"] for row in rows]


def shape(steps: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(s["node"], s["kind"], s["message"], json.dumps(s.get("data"))) for s in steps]


def test_it_declines_only_what_the_rules_decline_and_never_a_single_post() -> None:
    found = messages()
    declined = [m for m in found if declined_by_rules(m) is not None]
    joined = [json.loads(x) for x in (SPLIT / "joined.jsonl").read_text().splitlines()]
    three = {row["message"] for row in joined if row["case"] == "too_many"}
    assert declined and set(declined) <= three  # never a real single post, never two
    assert len(declined) >= len(three) // 2, (len(declined), len(three))


async def test_its_answer_and_steps_are_the_pipelines(tmp_path: Path) -> None:
    sample = [m for m in messages() if declined_by_rules(m) is not None][::10]
    sample += ["JWT? CORS? Docker?", "JWT가 뭐야? CORS는? 도커는?"]
    deps, llm = make_deps(tmp_path, {})
    assistant = Assistant(deps)
    for message in sample:
        quick = declined_by_rules(message)
        assert quick is not None, message
        piped = await assistant.ask(message)
        assert (quick.answer, quick.plan_case, quick.question_type, quick.sources) == (
            piped.answer,
            piped.plan_case,
            piped.question_type,
            piped.sources,
        ), message
        assert shape(quick.steps) == shape(piped.steps), message  # type: ignore[arg-type]
    assert llm.tasks() == []


@pytest.mark.parametrize("message", ["How do I read a file line by line in Python?", "hi!"])
def test_anything_else_goes_to_the_pipeline(message: str) -> None:
    assert declined_by_rules(message) is None


def test_the_cli_declines_before_loading_anything_heavy(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from codeweaver.cli.app import app\n"
        "try:\n    app(['ask', 'JWT? CORS? Docker?'])\nexcept SystemExit:\n    pass\n"
        "heavy = ('langgraph', 'langchain_core', 'xllamacpp', 'qdrant_client', 'numpy')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout
    assert "- Docker?" in out.stdout
    assert time.monotonic() - started < 30  # a bound against hangs, not a benchmark


async def test_a_cache_hit_is_the_pipelines_answer_and_steps(tmp_path: Path) -> None:
    from codeweaver.memory.caches import build_cache

    question = "How do I read a file line by line in Python?"
    deps, llm = make_deps(tmp_path, {}, cache_mode="exact")
    cited = [{"title": "open", "url": "https://docs.python.org/3/library/functions.html#open",
              "snippet": "", "source": "installed_docs", "score": 0.9}]  # fmt: skip
    deps.cache.store(question, "Use `for line in open(path):` [1].", cited, "scripted:test")
    quick = cached_by_rules(question, deps.settings)
    assert quick is not None
    piped = await Assistant(deps).ask(question)
    assert llm.tasks() == []  # the pipeline too answered from the cache
    assert (quick.answer, quick.sources, quick.plan_case, quick.question_type) == (
        piped.answer,
        piped.sources,
        piped.plan_case,
        piped.question_type,
    )
    assert shape(quick.steps) == shape(piped.steps)  # type: ignore[arg-type]
    # What the pipeline would not read from the cache, neither does the quick path.
    assert cached_by_rules("What is a Python generator?", deps.settings) is None  # a miss
    korean = deps.settings.model_copy(update={"cache_enabled": True})
    assert cached_by_rules("파이썬에서 파일을 한 줄씩 읽으려면?", korean) is None
    off = deps.settings.model_copy(update={"cache_enabled": False})
    assert cached_by_rules(question, off) is None
    assert isinstance(build_cache(deps.settings), type(deps.cache))
