"""Reference identifier recall on real references.

Examples are copied from public sets (Stack Overflow content, CC BY-SA 4.0, via
ProsusAI/stack-eval; CoNaLa, MIT / CC BY-SA), cited by line or question id.
"""

from __future__ import annotations

from codeweaver_eval.identifiers import found_in, identifier_recall, identifiers

# StackEval line 10 (questionId ad8195b11ab24122837e00c9ed607cd6).
PYMONGO = (
    "The correct solution is to use a WriteConcern with w=0 and ordered=False:\n\n\n\n```\n"
    "import pymongo\nfrom pymongo.write_concern import WriteConcern\n\n\n"
    "mongodb_connection[db][collection].with_options(write_concern=WriteConcern(w=0))"
    ".insert_many(messages, ordered=False)\n\n```\n\n"
)
# StackEval line 13.
NUMS = (
    "Since you are taking the print statement under the for loop, so just placed the print "
    "statement out of the loop.\n\n\n\n```\nnums = []\nfor x in range (9000, 9004):\n"
    "    nums.append(x)\nprint (nums)\n\n```\n\n"
)
# StackEval line 8.
CONDA = (
    "As commented by @darthbith, using the `--use-local` flag with the package name,\n\n\n\n"
    "```\nconda install -n my_env --use-local my_pkg\n\n```\n\nworks as intended. Using a "
    "path to a tarball directly triggers Conda to install without dependencies.\n\n\n"
)
# StackEval line 1 (Rust): its code is a macro and format strings only.
RUST = (
    'I have come to prefer these patterns:\n\n\n\n```\nprintln!("{:08b}", 1i8);\n'
    'println!("{:016b}", 12000u16);\nprintln!("{:032b}", 624485u32);\n\n```\n\n'
)


def test_api_names_of_a_stackeval_answer_without_its_prose_or_variables() -> None:
    names = identifiers(PYMONGO)
    assert {"pymongo", "write_concern", "WriteConcern", "with_options", "insert_many"} <= names
    assert "mongodb_connection" not in names
    assert "messages" not in names
    assert "correct" not in names  # prose is not code


def test_variables_the_snippet_defines_are_left_out() -> None:
    assert identifiers(NUMS) == {"append"}


def test_commands_and_flags_of_a_shell_answer() -> None:
    names = identifiers(CONDA)
    assert {"conda", "install", "--use-local"} <= names
    assert "my_pkg" not in names


def test_a_conala_snippet_is_all_code_and_its_dataframe_variable_is_not_an_api() -> None:
    # CoNaLa question 18594469.
    assert identifiers("df.div(df.sum(axis=1), axis=0)", is_code=True) == {"div", "sum"}
    # CoNaLa question 41067960.
    snippet = "sum(d * 10 ** i for i, d in enumerate(x[::-1]))"
    assert identifiers(snippet, is_code=True) == {"sum", "enumerate"}


def test_a_standard_module_prefix_counts_as_an_api_name() -> None:
    # CoNaLa question 10115967.
    snippet = "print(list(itertools.combinations({1, 2, 3, 4}, 3)))"
    assert identifiers(snippet, is_code=True) == {"itertools", "combinations"}


def test_found_means_a_whole_word_in_code_or_prose() -> None:
    names = {"sum", "insert_many", "--use-local"}
    answer = "Call `collection.insert_many(docs)`; the summary says to pass --use-local."
    assert found_in(names, answer) == {"insert_many", "--use-local"}


def test_recall_is_the_share_found_and_none_without_identifiers() -> None:
    snippet = "sum(d * 10 ** i for i, d in enumerate(x[::-1]))"
    assert identifier_recall(snippet, "use sum() over a generator", is_code=True) == 0.5
    assert identifier_recall(RUST, "anything") is None
