"""A JavaScript project with eventemitter3 5.0.1 installed: the pipeline, with a scripted
model and the sources built from the registry as the app builds them, answers a question
about the package's API and cites the installed version's `.d.ts` documentation."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeweaver.agent.runner import Assistant
from codeweaver.factory import build_sources
from tests.fakes import make_deps

QUESTION = "How do I add a one-time listener with eventemitter3?"
ANSWER = (
    "Register the listener with `once()`: it is removed after the first `emit()` of the "
    "event.\n\n```js\nconst EventEmitter = require('eventemitter3');\n\n"
    "const emitter = new EventEmitter();\nemitter.once('ready', () => console.log('ready'));\n"
    "emitter.emit('ready');\n```"
)
SCRIPT = {
    "classify_intent": '{"intent": "learning"}',
    "generate_answer": ANSWER,
    "check_answer": '{"unsupported": [], "answers_question": true}',
}


async def test_a_question_about_the_api_cites_the_installed_version(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "src").mkdir()
    monkeypatch.chdir(project / "src")  # the project is found from the working folder
    deps, llm = make_deps(tmp_path, SCRIPT, sources=[], enabled_sources="npm_docs")
    deps.sources = build_sources(deps.settings)
    assert list(deps.sources) == ["npm_docs"]

    result = await Assistant(deps).ask(QUESTION)

    searched = [s for s in result.steps if s["node"] == "search_package_docs"]
    assert [s["kind"] for s in searched][:1] == ["act"], searched
    cited = [s for s in result.sources if s["source"] == "npm_docs"]
    assert [s["reference"] for s in cited] == ["npm:eventemitter3@5.0.1#EventEmitter.once"]
    (once,) = cited
    assert once["url"] == "https://github.com/primus/eventemitter3"
    assert once["attribution"] == "licence: MIT"
    assert "Add a one-time listener for a given event." in once["snippet"]
    assert "[1]" in result.answer  # cited where the answer's code calls `.once(`
    assert "generate_answer" in llm.tasks()
