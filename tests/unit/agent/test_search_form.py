"""The search form of a question, on real StackEval posts (Stack Overflow, CC BY-SA 4.0,
via ProsusAI/stack-eval; cited by line)."""

from __future__ import annotations

from codeweaver.agent.rules.queries import general_query, query_variations, search_form

# StackEval line 10, abridged: title, prose, code, prose.
PYMONGO_POST = (
    "How to Ignore Duplicate Key Errors Safely Using insert\\_many\n"
    "I need to ignore duplicate inserts when using insert\\_many with pymongo, where the "
    "duplicates are based on the index.\n\n\nHere's my code snippet:\n\n\n\n```\ntry:\n"
    "    results = mongo_connection[db][collection].insert_many(documents, ordered=False, "
    "bypass_document_validation=True)\nexcept pymongo.errors.BulkWriteError as e:\n"
    "    logger.error(e)\n\n```\n\nI would like the insert\\_many to ignore duplicates and "
    'not throw an exception (which fills up my error logs). I miss "w=0"...\n\n\nThanks\n'
)
# StackEval line 8, abridged.
CONDA_POST = (
    "Conda dependencies do not install on local package build\n"
    "I am building a Python package using `conda-build`. Right now, my structure looks "
    "like this:\n\n```\n- my_recipe/\n    - meta.yaml\n    - build.sh\n\n```\n\n"
    "And my `meta.yaml` reads thusly:\n\n```\npackage:\n  name: my_pkg\n```\n"
)


def test_a_one_line_question_is_searched_as_written() -> None:
    # StackEval line 14.
    assert search_form("Sort Dict by Values in Python 3.6+") == "Sort Dict by Values in Python 3.6+"


def test_a_post_is_searched_by_its_title_and_the_names_its_prose_quotes() -> None:
    form = search_form(CONDA_POST)
    assert form == "Conda dependencies do not install on local package build conda-build meta.yaml"
    assert "my_recipe" not in form  # names inside code blocks are the asker's own


def test_markdown_escapes_are_undone_and_the_error_line_is_its_own_variation() -> None:
    form = search_form(PYMONGO_POST)
    assert form.startswith("How to Ignore Duplicate Key Errors Safely Using insert_many")
    assert "\\_" not in form
    assert query_variations(form, PYMONGO_POST, None) == [form, "pymongo.errors.BulkWriteError"]


def test_a_broader_query_keeps_the_core_terms_and_names_as_written() -> None:
    # StackEval line 10's title, and line 14's.
    title = "How to Ignore Duplicate Key Errors Safely Using insert_many"
    assert general_query(title) == "Ignore Duplicate Key Errors Safely insert_many"
    assert general_query("Sort Dict by Values in Python 3.6+") == "Sort Dict Values Python 3.6+"
    # Nothing to drop: the same query would find the same documents.
    assert general_query("python open file readline") is None
