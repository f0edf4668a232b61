"""installed_docs re-ranking: the embedded text, the score features, answer usage, the floor
for APIs a question spells out.

Docstrings are verbatim from CPython 3.11 (`zip`, `int`, `dict.update`,
`collections.OrderedDict.pop`); questions and snippets are CoNaLa rows
(../shared/data/retrieval/conala/conala-train.json), cited by question_id.
"""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from codeweaver.sources.installed_docs import (
    CollectorOptions,
    InstalledDocsSource,
    RankingOptions,
    ranking,
    vectors,
)
from codeweaver.sources.installed_docs.exact import leaf_named, question_words
from codeweaver.sources.installed_docs.model import DocEntry
from codeweaver.sources.installed_docs.usage import ANSWER_USAGE, usage_features
from codeweaver_eval.retrieval_calibrate import answer_usage
from codeweaver_eval.retrieval_eval import RetrievalQuestion
from tests.unit.sources.installed_docs.test_installed_docs_hybrid import FakeEmbedder

ZIP_SIGNATURE = "zip(*iterables, strict=False) --> Yield tuples until an input is exhausted."
ZIP_DOC = """>>> list(zip('abcdefg', range(3), range(4)))
   [('a', 0, 0), ('b', 1, 1), ('c', 2, 2)]

The zip object yields n-length tuples, where n is the number of iterables
passed as positional arguments to zip()."""
INT_DOC = """int(x, base=10) -> integer

Convert a number or string to an integer, or return 0 if no arguments
are given. If x is a number, return x.__int__()."""
UPDATE_SIGNATURE = "D.update([E, ]**F) -> None.  Update D from dict/iterable E and F."
UPDATE_DOC = """If E is present and has a .keys() method, then does: for k in E: D[k] = E[k]
If E is present and lacks a .keys() method, then does: for k, v in E: D[k] = v"""
POP_DOC = """od.pop(k[,d]) -> v, remove specified key and return the corresponding
value.  If key is not found, d is returned if given, otherwise KeyError
is raised."""
DEFAULTDICT_SIGNATURE = "defaultdict(default_factory=None, /, [...]) --> dict with default factory"
DEFAULTDICT_DOC = """The default factory is called without arguments to produce
a new value when a key is not present, in __getitem__ only."""


def _entry(name: str, kind: str, signature: str, doc: str) -> DocEntry:
    module = name.rpartition(".")[0] if kind != "method" else name.split(".")[0]
    return DocEntry(name, kind, module, signature, doc, "python", "Python", "3.11.7")


# --------------------------------------------------------------------------- embedded text


def test_embedding_text_skips_code_and_names_builtins_as_python_does() -> None:
    # CoNaLa question_id 23612271 ("A sequence of empty lists of length n in Python?"):
    # `zip` ranked second by its embedded doctest line, which looks like any list question.
    zip_ = _entry("builtins.zip", "class", ZIP_SIGNATURE, ZIP_DOC)
    assert vectors.embedding_text(zip_) == (
        "zip (built-in class): Yield tuples until an input is exhausted."
    )
    # CoNaLa question_id 34696853 ("Convert list of strings to int"): `int` was embedded as
    # its call line `int(x, base=10) -> integer`.
    int_ = _entry("builtins.int", "class", "int([x]) -> integer", INT_DOC)
    assert vectors.embedding_text(int_).startswith(
        "int (built-in class): Convert a number or string to an integer"
    )
    update = _entry("builtins.dict.update", "method", UPDATE_SIGNATURE, UPDATE_DOC)
    assert vectors.embedding_text(update) == (
        "dict.update (built-in method): Update D from dict/iterable E and F."
    )
    pop = _entry("collections.OrderedDict.pop", "method", "", POP_DOC)
    assert vectors.embedding_text(pop) == (
        "collections.OrderedDict.pop: remove specified key and return the corresponding value."
    )
    # A signature's words that are no sentence do not replace the docstring.
    factory = _entry("collections.defaultdict", "class", DEFAULTDICT_SIGNATURE, DEFAULTDICT_DOC)
    assert vectors.embedding_text(factory).startswith(
        "collections.defaultdict: The default factory is called without arguments"
    )


def test_new_text_format_rebuilds_vectors_from_the_text_cache(
    tmp_path: Path, options: CollectorOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = FakeEmbedder()
    source = InstalledDocsSource(tmp_path / "index", options=options, embedder=lambda: embedder)
    first = source.ensure_index()
    assert embedder.texts == first.entry_count
    # A new `VECTORS_FORMAT` makes the stored vectors stale, but texts that did not change are
    # taken from the cache (keyed by text), not embedded again.
    monkeypatch.setattr(vectors, "VECTORS_FORMAT", vectors.VECTORS_FORMAT + 1)
    again = InstalledDocsSource(tmp_path / "index", options=options, embedder=lambda: embedder)
    again.ensure_index()
    meta = (first.path / vectors.VECTORS_META).read_text()
    assert f'"format": {vectors.VECTORS_FORMAT}' in meta
    assert embedder.texts == first.entry_count


@pytest.fixture(scope="module")
def options(tmp_path_factory: pytest.TempPathFactory) -> CollectorOptions:
    """The real stdlib `re` and `glob` sources."""
    stdlib = tmp_path_factory.mktemp("docs") / "stdlib"
    real = Path(sysconfig.get_paths()["stdlib"])
    shutil.copytree(real / "re", stdlib / "re", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("glob.py", "fnmatch.py"):
        shutil.copy(real / name, stdlib / name)
    return CollectorOptions(
        include_builtin_modules=False, include_topics=False, include_distributions=False,
        stdlib_dir=stdlib,
    )  # fmt: skip


# --------------------------------------------------------------------------- score features


def test_leaf_named_matches_forms_and_abbreviations() -> None:
    # CoNaLa question_id 17474211: `a = sorted(a, key=lambda x: float(x))`.
    words = question_words("How to sort python list of strings of numbers")
    assert leaf_named("sort", words) == 1.0
    assert leaf_named("sorted", words) == 0.5  # "sort" starts it
    assert leaf_named("str", words) == 1.0  # "strings" -> `str`
    assert leaf_named("split", words) == 0.0
    assert leaf_named("so", words) == 0.0  # too short to count as a prefix


def test_answer_usage_counts_questions_whose_snippets_use_the_name() -> None:
    catalogue = dict.fromkeys(
        ["builtins.str.join", "builtins.bytes.join", "builtins.sorted", "re.sub", "os.path.join"],
        "python",
    )
    questions = [
        # CoNaLa question_id 7794208 (even): `' '.join(sorted(set(words), key=words.index))`.
        RetrievalQuestion(
            7794208,
            "How can I remove duplicate words in a string with Python?",
            ("print(' '.join(sorted(set(words), key=words.index)))",),
        ),
        # CoNaLa question_id 25474338 (even), one of its two snippets.
        RetrievalQuestion(
            25474338,
            "regex for repeating words in a string in Python",
            ("re.sub('(?<!\\\\S)((\\\\S+)(?:\\\\s+\\\\2))(?:\\\\s+\\\\2)+(?!\\\\S)', '\\\\1', s)",),
        ),
    ]
    assert answer_usage(questions, catalogue) == {
        "builtins.bytes.join": 1, "builtins.sorted": 1, "builtins.str.join": 1, "re.sub": 1,
    }  # fmt: skip


def test_usage_features_read_the_table_by_name_or_alias() -> None:
    # Counted on the even CoNaLa part: `re.sub` answers question_id 25474338 and others.
    assert ANSWER_USAGE["re.sub"] > ANSWER_USAGE.get("re.subn", 0)
    sub = _entry("re.sub", "function", "sub(pattern, repl, string, count=0, flags=0)", "")
    aliased = DocEntry(
        "x.sub", "function", "x", "", "", "python", "Python", "3", aliases=("re.sub",)
    )
    unknown = _entry("re.template", "function", "", "")
    features = usage_features([sub, aliased, unknown])
    assert features[0] == features[1] == pytest.approx(np.log1p(ANSWER_USAGE["re.sub"]) / 4)
    assert features[2] == 0.0


def test_models_weigh_every_feature_and_reward_answer_usage() -> None:
    entry = _entry("re.sub", "function", "", "")
    candidate = ranking.Candidate(0, entry, 0.05, 0.4, 0.5, 0, 1.0, 1.0, 0.6, 0.0, 0.0)
    used = ranking.Candidate(0, entry, 0.05, 0.4, 0.5, 0, 1.0, 1.0, 0.6, 0.0, 0.8)
    for model in (ranking.SCORE_MODEL, ranking.SCORE_MODEL_NO_VECTORS):
        assert len(model) == len(candidate.features()) + 1
        assert ranking.logistic(used.features(), model) > ranking.logistic(
            candidate.features(), model
        )


# --------------------------------------------------------------------------- spelled APIs


def test_an_api_spelled_with_its_module_reaches_the_bar(
    tmp_path: Path, options: CollectorOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if no CoNaLa answer used `re.sub`: only what the question spells can lift it.
    monkeypatch.setattr(ranking, "usage_features", lambda entries: np.zeros(len(entries)))
    source = InstalledDocsSource(
        tmp_path / "index", options=options, ranking=RankingOptions(dense=False)
    )
    source.ensure_index()
    # CoNaLa question_id 33724111: "Python RegEx using re.sub with multiple patterns" spells
    # `re.sub` as code: it asks for that page, whatever the model makes of its words.
    found = source.search_sync("Python RegEx using re.sub with multiple patterns", 5)
    refs = [r["reference"].partition(":")[2].rpartition("@")[0] for r in found]
    assert "re.sub" in refs
    ranker = source._ranker_for(source._ensure(None, retry=True), None, wait=True)
    by_name = {
        c.entry.name: c for c in ranker.rank("Python RegEx using re.sub with multiple patterns")
    }
    sub = by_name["re.sub"]
    # The fitted model alone leaves it below the bar; the floor lifts it exactly there.
    assert ranking.logistic(sub.features(), ranking.SCORE_MODEL_NO_VECTORS) < sub.score
    assert sub.score >= ranking.SCORE_THRESHOLD
    assert ranking._parent(sub.entry) == "re"
    assert (
        ranking._parent(
            DocEntry("builtins.zip", "class", "builtins", "", "", "python", "Python", "3")
        )
        == ""
    )
