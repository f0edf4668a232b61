"""A Node project with the real `nanoid@3.3.7` (npm, from the registry): "How do I make a
nanoid with a custom alphabet?" is answered from its `.d.ts`, and the answer's sources
hold `customAlphabet (function) — nanoid 3.3.7`.

What broke it: the npm index's precision-first bar (since 3bf0e24, which brought npm_docs)
counts every plain word of the question in its idf mass, and a word no entry holds counts
as the rarest. In a project's small index the light verb "make" is such a word: 70 % of
the question's mass, so `customAlphabet` covered 30 % of it (bar: 60 %) and scored 0.4765
(bar: 0.5), while "nanoid custom alphabet" scored 0.749. Bisecting the npm_docs and search
node history (every commit from 3bf0e24 to e0b1b2e, `npm_docs` the only source, scripted
model) found no commit that cited it: until e69c1c4 the pipeline ran a second round, whose
broader query by rule ("make nanoid custom alphabet", the same words without stopwords)
scored the same 0.4765 at its parent 1fedf93; e69c1c4 only stopped that fruitless round
("the offline ones saw every form"). The fix is in the bar: a light verb opening the task
(`npm_docs.tokens.LIGHT_VERBS`) adds to an entry that holds it but no longer counts against
those that do not.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from codeweaver.agent.runner import Assistant
from codeweaver.factory import build_sources
from tests.fakes import make_deps

pytestmark = pytest.mark.integration

QUESTION = "How do I make a nanoid with a custom alphabet?"
ANSWER = (
    "Call `customAlphabet()` with your alphabet and a size: it returns a function that "
    "makes IDs of those symbols.\n\n"
    "```js\nimport { customAlphabet } from 'nanoid';\n\n"
    "const nanoid = customAlphabet('0123456789abcdef', 10);\nconsole.log(nanoid());\n```"
)
SCRIPT = {
    "classify_intent": '{"intent": "learning"}',
    "generate_answer": ANSWER,
    "check_answer": '{"unsupported": [], "answers_question": true}',
}
TITLE = "customAlphabet (function) — nanoid 3.3.7"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: this test installs nanoid 3.3.7 from the registry")
    root = tmp_path_factory.mktemp("node-project")
    (root / ".git").mkdir()  # the project root CodeWeaver finds from the working folder
    (root / "package.json").write_text(json.dumps({"name": "p", "private": True}))
    subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "nanoid@3.3.7"],
        cwd=root, check=True, timeout=600,
    )  # fmt: skip
    return root


async def test_the_custom_alphabet_question_cites_customalphabet(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    deps, llm = make_deps(tmp_path, SCRIPT, sources=[], enabled_sources="npm_docs")
    deps.sources = build_sources(deps.settings)
    assert list(deps.sources) == ["npm_docs"]

    result = await Assistant(deps).ask(QUESTION)

    observed = [
        s["message"]
        for s in result.steps
        if s["node"] == "search_package_docs" and s["kind"] == "observe"
    ]
    assert observed and observed[0] != "0 results from npm_docs", observed
    titles = [s["title"] for s in result.sources]
    assert TITLE in titles, (titles, result.steps)
    cited = next(s for s in result.sources if s["title"] == TITLE)
    assert cited["reference"] == "npm:nanoid@3.3.7#customAlphabet"
    assert "Generate secure unique ID with custom alphabet." in cited["snippet"]
    assert "No source was found" not in result.answer
    assert "generate_answer" in llm.tasks()
