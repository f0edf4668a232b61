"""Indexing another environment: its Python's stdlib and topics, indexes side by side per
environment, and what a rebuild reuses (parsed entries, embedded texts)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import platform
import shutil
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from codeweaver.embeddings.base import Vectors, l2_normalise
from codeweaver.sources.installed_docs import (
    CollectorOptions,
    InstalledDocsSource,
    RankingOptions,
    ast_docs,
    collect,
    collect_entries,
    collector_options,
    indexer,
)
from codeweaver.sources.installed_docs.model import PARSED_DIR, PythonFacts
from codeweaver.sources.installed_docs.project import Environment, env_index_dir
from codeweaver.sources.installed_docs.results import entry_url

OURS = platform.python_version()
NO_STDLIB = CollectorOptions(include_stdlib=False, include_builtin_modules=False,
                             include_topics=False)  # fmt: skip
INDEX_ONLY = RankingOptions(dense=False, threshold=False)

TOPICS = """
import sys
sys.exit("a topics file is read as a literal, never run")
topics = {'for': 'The "for" statement\\n'
                 '*******************\\n\\nIterates over a sequence.',
          'with': 'The "with" statement wraps a block.'}
"""


def _write_dist(site: Path, name: str, version: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text, encoding="utf-8")
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    record = [f"{rel},," for rel in files] + [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(record) + "\n")


def _upgrade(site: Path, name: str, old: str, new: str) -> None:
    (site / f"{name}-{old}.dist-info").rename(site / f"{name}-{new}.dist-info")
    meta = site / f"{name}-{new}.dist-info" / "METADATA"
    meta.write_text(meta.read_text().replace(old, new))


def _env(root: Path, site: Path, version: str = OURS, stdlib: Path | None = None) -> Environment:
    """An environment as its interpreter would describe it (none is run here)."""
    return Environment(
        python=root / "bin" / "python",
        found_by=".venv in the project",
        version=version,
        sys_version=f"{version} (test build)",
        prefix=root,
        stdlib=stdlib or Path(sysconfig.get_paths()["stdlib"]),
        site_dirs=(site,),
    )


def _site(tmp_path: Path, name: str) -> Path:
    site = tmp_path / name / "site-packages"
    _write_dist(site, "gadget", "1.0", {"gadget.py": GADGET})
    _write_dist(site, "widgets", "2.0", {"widgets/__init__.py": WIDGETS})
    return site


GADGET = 'def spin_gadget(speed):\n    """Spin the gadget around its axis at a given speed."""\n'
WIDGETS = 'def render_widget(w):\n    """Render a widget onto the terminal screen."""\n'


class CountingEmbedder:
    """Bag-of-words vectors; counts the texts it embeds."""

    name = "fake-bow"
    dimension = 32

    def __init__(self) -> None:
        self.texts = 0

    def embed(self, texts: list[str]) -> Vectors:
        self.texts += len(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, hashlib.sha256(word.encode()).digest()[0] % self.dimension] += 1.0
        return l2_normalise(out)


# --------------------------------------------------------------------------- another Python


@pytest.fixture()
def other_stdlib(tmp_path: Path) -> Path:
    stdlib = tmp_path / "py399" / "lib" / "python3.99"
    real = Path(sysconfig.get_paths()["stdlib"])
    shutil.copytree(real / "json", stdlib / "json", ignore=shutil.ignore_patterns("__pycache__"))
    (stdlib / "newmod.py").write_text('def shiny():\n    """Only Python 3.99 has it."""\n')
    (stdlib / "pydoc_data").mkdir()
    (stdlib / "pydoc_data" / "__init__.py").write_text("")
    (stdlib / "pydoc_data" / "topics.py").write_text(TOPICS)
    return stdlib


def test_another_python_is_stamped_on_its_stdlib_and_its_docs_urls(
    tmp_path: Path, other_stdlib: Path
) -> None:
    env = dataclasses.replace(
        _env(tmp_path / "py399", _site(tmp_path, "env"), "3.99.1", other_stdlib),
        stdlib_names=frozenset({"json", "newmod", "pydoc_data"}),
    )
    options = collector_options(env)
    assert options.python == PythonFacts("3.99.1", "3.99.1 (test build)", env.stdlib_names)
    assert options.paths == env.site_dirs and options.stdlib_dir == other_stdlib
    assert not options.include_builtin_modules  # read in-process: only for our major.minor
    entries = {e.name: e for e in collect_entries(options)}
    assert entries["json.loads"].version == "3.99.1"
    assert entries["newmod.shiny"].package == "python"  # a module only that Python knows
    assert entry_url(entries["json.loads"]).startswith("https://docs.python.org/3.99/library/")
    # Topics come from that Python's topics file, read as a literal.
    assert entries["for"].kind == "topic" and entries["for"].version == "3.99.1"
    assert entries["for"].doc.startswith('The "for" statement')
    assert entry_url(entries["for"]) == (
        "https://docs.python.org/3.99/reference/compound_stmts.html#for"
    )
    assert entries["gadget.spin_gadget"].version == "1.0"
    assert "builtins.len" not in entries


def test_builtins_and_topics_of_our_major_minor_are_read_in_process(tmp_path: Path) -> None:
    env = _env(tmp_path / "same", _site(tmp_path, "env"))
    options = collector_options(env)
    assert options.include_builtin_modules and options.include_topics
    facts = PythonFacts(OURS, sys.version)
    no_file = dataclasses.replace(
        NO_STDLIB, include_topics=True, include_distributions=False, stdlib_dir=tmp_path,
        python=facts,
    )  # fmt: skip
    topics = {e.name for e in collect_entries(no_file)}  # no topics.py there: ours are used
    assert {"for", "with"} <= topics


def test_the_fingerprint_is_the_projects_python_and_distributions(tmp_path: Path) -> None:
    site = _site(tmp_path, "env")
    env = _env(tmp_path / "env", site)
    base = dataclasses.replace(NO_STDLIB, paths=(site,))
    options = collector_options(env, NO_STDLIB)
    assert indexer.compute_fingerprint(options) != indexer.compute_fingerprint(base)
    other = dataclasses.replace(env, sys_version=f"{OURS} (another build)")
    assert indexer.compute_fingerprint(collector_options(other, NO_STDLIB)) != (
        indexer.compute_fingerprint(options)
    )


# --------------------------------------------------------------------------- side by side


def test_each_environment_keeps_its_own_latest_index(tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    site_a, site_b = _site(tmp_path, "a"), _site(tmp_path, "b")
    env_a, env_b = _env(tmp_path / "a", site_a), _env(tmp_path / "b", site_b)

    def source(env: Environment | None, site: Path) -> InstalledDocsSource:
        options = collector_options(env, dataclasses.replace(NO_STDLIB, paths=(site,)))
        return InstalledDocsSource(
            index_dir, options=options, environment=env, ranking=INDEX_ONLY,
            parsed_dir=index_dir / PARSED_DIR,
        )  # fmt: skip

    own = source(None, site_a).ensure_index()  # CodeWeaver's own: today's folder
    first_a = source(env_a, site_a).ensure_index()
    first_b = source(env_b, site_b).ensure_index()
    assert own.path.parent == index_dir
    assert first_a.path.parent == env_index_dir(index_dir, env_a) == index_dir / "envs" / env_a.key
    assert first_b.path.parent == index_dir / "envs" / env_b.key and env_a.key != env_b.key
    label = json.loads((first_a.path.parent / "environment.json").read_text())
    assert label["prefix"] == str(env_a.prefix)

    _upgrade(site_a, "gadget", "1.0", "1.1")  # an install in A: only A's old index goes
    second_a = source(env_a, site_a).ensure_index()
    assert second_a.fingerprint != first_a.fingerprint and not first_a.path.exists()
    assert first_b.path.exists() and own.path.exists()
    # CodeWeaver's own rebuild removes its old fingerprints, never the environments' folders.
    _write_dist(site_a, "extra", "0.1", {"extra.py": GADGET.replace("spin", "stop")})
    rebuilt_own = source(None, site_a).ensure_index()
    assert not own.path.exists() and rebuilt_own.path.parent == index_dir
    assert second_a.path.exists() and first_b.path.exists()
    assert (index_dir / PARSED_DIR).is_dir()


def test_an_install_reparses_only_the_package_that_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _site(tmp_path, "env")
    options = dataclasses.replace(NO_STDLIB, paths=(site,))
    parsed: list[str] = []
    real = ast_docs.parse_file

    def counting(group: object, module: str, *rest: object) -> None:
        parsed.append(module)
        real(group, module, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(collect, "parse_file", counting)
    cache = tmp_path / "parsed"
    first = collect_entries(options, parsed_dir=cache)
    assert sorted(parsed) == ["gadget", "widgets"]
    parsed.clear()
    assert collect_entries(options, parsed_dir=cache) == first and parsed == []

    _upgrade(site, "gadget", "1.0", "1.1")
    progress: list[tuple[str, int, int]] = []
    again = collect_entries(options, lambda *a: progress.append(a), parsed_dir=cache)
    assert parsed == ["gadget"]
    assert [e.version for e in again if e.package == "gadget"] == ["1.1"]
    assert again == collect_entries(options)  # the same entries as a fresh parse
    assert progress[-1] == ("Parsing installed packages", 2, 2)

    # An edited source file is parsed again even at the same version.
    parsed.clear()
    (site / "widgets" / "__init__.py").write_text(WIDGETS + "\n\ndef more():\n    '''More.'''\n")
    assert "widgets.more" in {e.name for e in collect_entries(options, parsed_dir=cache)}
    assert parsed == ["widgets"]
    # A damaged cache file is parsed again, not trusted.
    for file in cache.glob("gadget-*.jsonl"):
        file.write_text("{broken")
    parsed.clear()
    assert collect_entries(options, parsed_dir=cache) == collect_entries(options)
    assert "gadget" in parsed


def test_a_projects_first_build_reuses_codeweavers_embedded_texts(tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    site = _site(tmp_path, "env")
    options = dataclasses.replace(NO_STDLIB, paths=(site,))
    embedder = CountingEmbedder()

    def source(env: Environment | None) -> InstalledDocsSource:
        return InstalledDocsSource(
            index_dir, options=collector_options(env, options), environment=env,
            embedder=lambda: embedder, ranking=RankingOptions(threshold=False),
        )  # fmt: skip

    own = source(None).ensure_index()
    assert embedder.texts == own.entry_count
    env = _env(tmp_path / "env", site)
    project = source(env).ensure_index()  # same packages: nothing new to embed
    assert project.path.parent == index_dir / "envs" / env.key
    assert embedder.texts == own.entry_count
    assert (project.path.parent / ".embedding-cache-fake-bow.npy").is_file()
    # A package installed in the project: only its entries are embedded.
    _write_dist(site, "extra", "0.1", {"extra.py": GADGET.replace("spin", "stop")})
    source(env).ensure_index()
    assert embedder.texts == own.entry_count + 1
