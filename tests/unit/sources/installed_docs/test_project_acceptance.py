"""A project with its own virtualenv holding six 1.16.0 (CodeWeaver's own has 1.17.0): the
installed docs find that environment, index six at 1.16.0, the pipeline cites that version
and `doctor` names the environment.

The wheel is the real one from PyPI (`tests/fixtures/project_env/README.md`); a wheel's
contents unzipped into site-packages are a valid installation.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from rich.console import Console

from codeweaver.agent.runner import Assistant
from codeweaver.cli.doctor import collect_report, render_report
from codeweaver.config import Settings
from codeweaver.sources.base import create_source
from codeweaver.sources.installed_docs import (
    CollectorOptions,
    InstalledDocsSource,
    RankingOptions,
    collector_options,
    find_project,
    indexer,
)
from codeweaver.sources.installed_docs.collect import list_distributions
from codeweaver.sources.installed_docs.project import Environment, venv_python
from tests.fakes import make_deps

WHEEL = Path(__file__).parents[3] / "fixtures" / "project_env" / "six-1.16.0-py2.py3-none-any.whl"
#: The project's packages only: its stdlib is ours (tested in test_project_index.py).
PACKAGES_ONLY = CollectorOptions(
    include_stdlib=False, include_builtin_modules=False, include_topics=False
)
QUESTION = "How do I turn bytes into a native str with six.ensure_str?"
ANSWER = (
    "Use `six.ensure_str()` to turn bytes into a native `str`: it decodes bytes and returns "
    'text unchanged.\n\n```python\nimport six\n\ntext = six.ensure_str(b"caf\\xc3\\xa9")\n```'
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git project with `.venv` (made by CodeWeaver's Python, so the same `major.minor`)
    holding six 1.16.0 and nothing else."""
    root = tmp_path_factory.mktemp("django-shop")
    (root / ".git").mkdir()
    (root / "src").mkdir()
    venv = root / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = [p for p in venv.rglob("site-packages") if p.is_dir()]
    with zipfile.ZipFile(WHEEL) as wheel:
        wheel.extractall(site)
    return root


@pytest.fixture()
def env(project: Path) -> Environment:
    found = find_project(project / "src")
    assert found.env is not None, found.reason
    return found.env


def test_the_project_environment_is_found_from_the_project_folder(
    project: Path, env: Environment
) -> None:
    assert env.python == venv_python(project / ".venv")
    assert env.found_by == ".venv in the project"
    assert not env.own and env.prefix == (project / ".venv").resolve()
    assert env.sys_version == sys.version  # made by our interpreter: same Python
    dists = list_distributions(collector_options(env))
    assert [(d.name, d.version) for d in dists] == [("six", "1.16.0")]
    assert dict(ours=[d.version for d in list_distributions(CollectorOptions())
                      if d.canonical == "six"]) == {"ours": ["1.17.0"]}  # fmt: skip


def _source(index_dir: Path, env: Environment) -> InstalledDocsSource:
    return InstalledDocsSource(
        index_dir,
        options=collector_options(env, PACKAGES_ONLY),
        environment=env,
        ranking=RankingOptions(dense=False),
    )


def test_the_projects_index_holds_six_at_its_installed_version(
    tmp_path: Path, env: Environment
) -> None:
    progress: list[tuple[str, int, int]] = []
    source = _source(tmp_path / "index", env)
    started = time.perf_counter()
    info = source.ensure_index(lambda *a: progress.append(a))
    seconds = time.perf_counter() - started
    assert info.path.parent == tmp_path / "index" / "envs" / env.key
    loaded = indexer.load_index(info.path, info.fingerprint)
    versions = {(e.package, e.version) for e in loaded.entries}
    assert versions == {("six", "1.16.0")}
    assert {"six.ensure_str", "six.add_metaclass", "six.with_metaclass"} <= {
        e.name for e in loaded.entries
    }
    assert {"Parsing installed packages", "Tokenising documents", "Saving the index"} <= {
        phase for phase, _, _ in progress
    }
    assert info.fingerprint != indexer.compute_fingerprint(PACKAGES_ONLY)
    assert seconds < 30, f"the project index took {seconds:.1f} s"

    top = source.search_sync("six.ensure_str bytes to str", 3)
    assert top and top[0]["reference"] == "six:six.ensure_str@1.16.0"
    assert top[0]["title"] == "six.ensure_str — six 1.16.0"
    assert top[0]["attribution"] == "licence: MIT"  # read from the project's metadata


async def test_the_pipeline_cites_six_at_the_projects_version(
    tmp_path: Path, env: Environment
) -> None:
    source = _source(tmp_path / "index", env)
    deps, _llm = make_deps(
        tmp_path, {"classify_intent": '{"intent": "learning"}', "generate_answer": ANSWER},
        [source],
    )  # fmt: skip
    result = await Assistant(deps).ask(QUESTION)
    cited = [s for s in result.sources if s["source"] == "installed_docs"]
    assert [s["reference"] for s in cited] == ["six:six.ensure_str@1.16.0"]
    assert "[1]" in result.answer and "1.17.0" not in str(result.sources)


def test_doctor_and_the_registered_source_use_the_project_environment(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    settings = Settings(
        project=project / "src",
        data_dir=tmp_path / "data",
        cache_dir=tmp_path / "cache",
        model="scripted:echo",
        enabled_sources="installed_docs",
    )
    source = create_source("installed_docs", settings)
    assert isinstance(source, InstalledDocsSource) and source.environment is not None
    assert source.env_dir == settings.docs_index_dir / "envs" / source.environment.key
    assert source.options == collector_options(source.environment)
    assert source.options.paths == source.environment.site_dirs

    report = collect_report(settings)["project"]
    python = str(venv_python(project / ".venv"))
    assert report == {
        "root": str(project.resolve()),
        "environment": "project",
        "python": python,
        "found_by": ".venv in the project",
        "python_version": source.environment.version,
        "distributions": 1,
        "index": str(source.env_dir),
    }
    out = io.StringIO()
    render_report(Console(file=out, width=400), {**_minimal_report(), "project": report})
    text = out.getvalue()
    assert f"environment: {python} (found by .venv in the project)" in text
    assert "1 distributions" in text


def test_doctor_says_why_codeweavers_own_environment_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    settings = Settings(
        project=tmp_path,
        project_python=tmp_path / "missing-python",
        data_dir=tmp_path / "data",
        cache_dir=tmp_path / "cache",
        model="scripted:echo",
        enabled_sources="installed_docs",
    )
    report = collect_report(settings)["project"]
    assert report["environment"] == "codeweaver" and report["python"] == sys.executable
    assert report["reason"] == f"CODEWEAVER_PROJECT_PYTHON: {tmp_path / 'missing-python'} " + (
        "does not exist"
    )
    out = io.StringIO()
    render_report(Console(file=out, width=400), {**_minimal_report(), "project": report})
    assert "no project environment: CODEWEAVER_PROJECT_PYTHON:" in out.getvalue()
    assert "using CodeWeaver's own environment" in out.getvalue()


def _minimal_report() -> dict[str, object]:
    return {"model": {"model": "scripted:echo"}, "sources": {}, "stores": {}, "keys": {}}


def test_the_project_option_reaches_doctor_for_that_command_only(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from codeweaver.cli.app import app

    for name, value in {
        "CODEWEAVER_DATA_DIR": str(tmp_path / "data"),
        "CODEWEAVER_CACHE_DIR": str(tmp_path / "cache"),
        "CODEWEAVER_MODEL": "scripted:echo",
        "CODEWEAVER_SOURCES": "none",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CODEWEAVER_PROJECT", raising=False)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["--project", str(project / "src"), "doctor", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["project"]
    assert report["environment"] == "project" and report["root"] == str(project.resolve())
    assert "CODEWEAVER_PROJECT" not in os.environ  # restored when the command ended

    missing = CliRunner().invoke(app, ["--project", str(tmp_path / "nope"), "doctor"])
    assert missing.exit_code == 2 and "no such folder" in missing.stderr


def test_eval_retrieval_reports_the_project_environment_apart(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from codeweaver.cli.app import app

    for name, value in {
        "CODEWEAVER_DATA_DIR": str(tmp_path / "data"),
        "CODEWEAVER_CACHE_DIR": str(tmp_path / "cache"),
        "CODEWEAVER_MODEL": "scripted:echo",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CODEWEAVER_PROJECT", raising=False)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    questions = tmp_path / "six.json"
    rows = [
        {"question_id": 1, "intent": QUESTION, "snippet": "six.ensure_str(data)"},
        {"question_id": 2, "intent": "Sort a list in place", "snippet": "items.sort()"},
    ]
    questions.write_text(json.dumps(rows), encoding="utf-8")
    command = ["eval", "retrieval", "--file", str(questions), "--no-dense", "--json"]
    result = CliRunner().invoke(
        app, ["--project", str(project / "src"), *command, "--env", "project"]
    )
    assert result.exit_code == 0, result.output
    *per_question, last = [json.loads(line) for line in result.stdout.splitlines()]
    environment = last["environment"]
    assert environment["environment"] == "project"
    assert environment["python"] == str(venv_python(project / ".venv"))
    assert environment["distributions"] == 1
    found = per_question[0]["results"]
    assert {"name": "six.ensure_str", "hit": True} in [  # six 1.16.0's docs, judged a hit
        {"name": r["name"], "hit": r["hit"]} for r in found
    ], found
    assert last["summary"]["questions"] == 2

    monkeypatch.chdir(tmp_path)  # no project environment here
    missing = CliRunner().invoke(app, ["--project", str(tmp_path), *command, "--env", "project"])
    assert missing.exit_code == 2
    assert f"no project environment for {tmp_path.resolve()}" in missing.stderr
