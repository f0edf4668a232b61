"""`eval retrieval`: the hit rule on real CoNaLa rows, loading, and the report's arithmetic.

Rows are from ../shared/data/retrieval/conala/conala-train.json (CoNaLa curated train split,
cited by `question_id` and 1-based position in the file).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeweaver.agent.state import SearchResult
from codeweaver_eval.datasets import DatasetError
from codeweaver_eval.retrieval_eval import (
    RetrievalQuestion,
    evaluate_retrieval,
    load_questions,
    result_name,
)
from codeweaver_eval.retrieval_names import is_hit, snippet_uses

CONALA = Path(__file__).parents[4] / "shared/data/retrieval/conala/conala-train.json"


def _hit(snippet: str, name: str, stdlib: bool) -> bool:
    return is_hit(snippet_uses(snippet), name, stdlib)


def test_method_on_a_dataframe_variable_matches_the_pandas_method() -> None:
    # CoNaLa position 1904, question_id 22918212: "Fastest Way to Drop Duplicated Index…"
    snippet = "df[~df.index.duplicated()]"
    assert _hit(snippet, "pandas.Index.duplicated", stdlib=False)
    assert _hit(snippet, "pandas.DataFrame.duplicated", stdlib=False)
    assert not _hit(snippet, "numpy.lib.recfunctions.find_duplicates", stdlib=False)
    assert not _hit(snippet, "pandas.DataFrame.drop_duplicates", stdlib=False)


def test_variable_name_implies_its_module() -> None:
    # CoNaLa position 16, question_id 2158347: "How do I turn a python datetime into a string…"
    snippet = "my_datetime.strftime('%B %d, %Y')"
    assert _hit(snippet, "datetime.datetime.strftime", stdlib=True)
    assert _hit(snippet, "datetime.date.strftime", stdlib=True)
    # pandas is not what the snippet uses, though it has a method of that name.
    assert not _hit(snippet, "pandas.DatetimeIndex.strftime", stdlib=False)
    assert not _hit(snippet, "time.strftime", stdlib=True)


def test_attribute_of_a_module_only_matches_that_module() -> None:
    # CoNaLa position 21, question_id 25823608: "Find matching rows in 2 dimensional numpy array"
    snippet = "np.where((vals == (0, 1)).all(axis=1))"
    assert _hit(snippet, "numpy.where", stdlib=False)
    assert _hit(snippet, "numpy.ndarray.all", stdlib=False)
    assert _hit(snippet, "numpy.ma.where", stdlib=False)  # same top-level module: a hit
    # `.all()` is a method: the builtin function `all` does not document it.
    assert not _hit(snippet, "builtins.all", stdlib=True)


def test_regex_module_function_is_a_hit_but_str_split_is_not() -> None:
    # CoNaLa position 12, question_id 17352321: "Python splitting string by parentheses"
    snippet = 're.findall(\'\\\\[[^\\\\]]*\\\\]|\\\\([^\\\\)]*\\\\)|"[^"]*"|\\\\S+\', strs)'
    assert _hit(snippet, "re.findall", stdlib=True)
    assert _hit(snippet, "re.Pattern.findall", stdlib=True)
    assert not _hit(snippet, "builtins.str.split", stdlib=True)
    assert not _hit(snippet, "re.split", stdlib=True)


def test_bare_builtin_and_bare_imported_names() -> None:
    # CoNaLa position 5, question_id 13704860: "zip lists in python"
    assert _hit("zip([1, 2], [3, 4])", "builtins.zip", stdlib=True)
    assert not _hit("zip([1, 2], [3, 4])", "zipfile.ZipFile", stdlib=True)
    # CoNaLa position 2252, question_id 13438574: imports omitted, so any stdlib module.
    snippet = "sorted(results, key=itemgetter('year'))"
    assert _hit(snippet, "operator.itemgetter", stdlib=True)
    assert _hit(snippet, "builtins.sorted", stdlib=True)
    assert not _hit(snippet, "pandas.core.common.itemgetter", stdlib=False)


def test_django_methods_never_match_builtin_functions() -> None:
    # CoNaLa position 22, question_id 3805958: "How to delete a record in Django models?"
    snippet = "SomeModel.objects.filter(id=id).delete()"
    assert not _hit(snippet, "builtins.filter", stdlib=True)
    assert not _hit(snippet, "builtins.set.discard", stdlib=True)


def test_list_wrapped_around_a_view_by_2to3_does_not_count() -> None:
    # CoNaLa position 4, question_id 29565452: "Averaging the values in a dictionary…"
    snippet = "[(i, sum(j) / len(j)) for i, j in list(d.items())]"
    names = {u.name for u in snippet_uses(snippet)}
    assert names == {"sum", "len", "items"}
    assert _hit(snippet, "builtins.dict.items", stdlib=True)
    assert not _hit(snippet, "builtins.list", stdlib=True)
    # CoNaLa position 2, question_id 41067960: the calls inside the wrapper count.
    assert _hit("r = int(''.join(map(str, x)))", "builtins.map", stdlib=True)
    # CoNaLa position 975, question_id 2612802 ("copy a list"): a real `list(...)` counts.
    assert _hit("new_list = list(old_list)", "builtins.list", stdlib=True)


def test_snippet_without_any_call_uses_nothing() -> None:
    # CoNaLa position 25, question_id 18224991: "how to set global const variables in python"
    assert snippet_uses("GRAVITY = 9.8") == []


def test_unparsable_snippet_falls_back_to_regex() -> None:
    # StackEval line 458 (Python 2 `print` statement, which `ast` rejects).
    snippet = (
        "# Checking if string 'Mary' exists in the lists of the dictionary values\n"
        "print any(any('Mary' in s for s in subList) for subList in myDict.values())\n"
    )
    uses = {u.name: u for u in snippet_uses(snippet)}
    assert set(uses) == {"any", "values"}
    assert is_hit(uses.values(), "builtins.dict.values", stdlib=True)
    assert is_hit(uses.values(), "builtins.any", stdlib=True)
    # The comment's "string" is prose, not the `string` module.
    assert not is_hit(uses.values(), "string.Template.values", stdlib=True)
    # StackEval line 198: pasted output after the code; `df` still means pandas.
    pasted = "df['colC'] = df['colA'] + ('_' + df['colB']).fillna('')\nprint (df)\n    ID colA\n"
    assert is_hit(snippet_uses(pasted), "pandas.DataFrame.fillna", stdlib=False)


# --------------------------------------------------------------------------- loading


@pytest.mark.skipif(not CONALA.is_file(), reason="shared data not present")
def test_load_groups_rows_by_question_and_splits_parts() -> None:
    questions = load_questions(CONALA)
    by_id = {q.question_id: q for q in questions}
    # Positions 1 and 2 share question_id 41067960 (two reference snippets).
    assert len(by_id[41067960].snippets) == 2
    assert by_id[41067960].intent.startswith("How to convert a list of multiple integers")
    rows = json.loads(CONALA.read_text(encoding="utf-8"))
    assert len(questions) == len({r["question_id"] for r in rows})
    even = load_questions(CONALA, part="even")
    odd = load_questions(CONALA, part="odd")
    assert len(even) + len(odd) == len(questions)
    assert all(q.question_id % 2 == 0 for q in even)
    first = load_questions(CONALA, sample=20, seed=3)
    assert first == load_questions(CONALA, sample=20, seed=3)
    assert first != load_questions(CONALA, sample=20, seed=4)
    assert len(load_questions(CONALA, limit=7)) == 7


def test_load_rejects_rows_without_intent(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"intent": "zip lists in python", "snippet": "zip(a, b)"}\n{"snippet": "x"}\n')
    with pytest.raises(DatasetError, match=":2"):
        load_questions(path)


# --------------------------------------------------------------------------- report


def _result(name: str, package: str, score: float) -> SearchResult:
    return SearchResult(
        title=name, url="", snippet="", source="installed_docs", score=score,
        reference=f"{package}:{name}@1.0",
    )  # fmt: skip


def test_report_counts_recall_mrr_ceiling_and_precision() -> None:
    # Three CoNaLa questions: positions 5 (13704860), 16 (2158347) and 25 (18224991).
    questions = [
        RetrievalQuestion(13704860, "zip lists in python", ("zip([1, 2], [3, 4])",)),
        RetrievalQuestion(
            2158347,
            "How do I turn a python datetime into a string, with readable format date?",
            ("my_datetime.strftime('%B %d, %Y')",),
        ),
        RetrievalQuestion(18224991, "how to set global const variables in python", ("x = 1",)),
    ]
    catalogue = {
        "builtins.zip": "python",
        "zipfile.ZipFile": "python",
        "datetime.datetime.strftime": "python",
        "pandas.DatetimeIndex.strftime": "pandas",
    }
    answers = {
        13704860: [
            _result("zipfile.ZipFile", "python", 0.6),
            _result("builtins.zip", "python", 0.5),
        ],
        2158347: [_result("pandas.DatetimeIndex.strftime", "pandas", 0.4)],
        18224991: [],
    }
    intents = {q.intent: q.question_id for q in questions}
    report = evaluate_retrieval(
        questions, lambda query, k: answers[intents[query]], catalogue, k=5
    ).to_dict()
    assert report["questions"] == 3
    assert report["recall_at_k"] == pytest.approx(1 / 3)
    assert report["mrr"] == pytest.approx((1 / 2) / 3)
    assert report["in_index"] == 2  # the constant assignment uses no documented name
    assert report["empty_share"] == pytest.approx(1 / 3)
    assert report["top1_precision"] == 0.0  # both returned top-1s miss
    assert report["result_precision"] == pytest.approx(1 / 3)


def test_result_name_reads_the_reference() -> None:
    assert result_name(_result("json.loads", "python", 0.9)) == "json.loads"
    topic = SearchResult(title="", url="", snippet="", source="installed_docs", score=0.5,
                         reference="python:topic:for@3.11")  # fmt: skip
    assert result_name(topic) == "topic:for"
