"""How much of an answer's prose is in the question's language."""

from __future__ import annotations

from codeweaver.agent import prompts
from codeweaver.words.language import IN_LANGUAGE, language_share

KOREAN_ANSWER = (
    "pandas에서는 `fillna`에 열마다 다른 값을 줄 수 있습니다 [1].\n\n"
    "```python\ndf['when'] = df['when'].fillna(pd.Timestamp('2020-01-01'))\n"
    "df['x'] = df['x'].fillna(0)\n```\n\n"
    "NaT는 날짜 열의 결측값이고, NaN은 숫자 열의 결측값입니다."
)


def test_code_and_identifiers_do_not_make_a_korean_answer_english() -> None:
    assert language_share(KOREAN_ANSWER, "ko") == 1.0


def test_an_english_answer_to_a_korean_question_scores_zero() -> None:
    english = "Use `fillna` with a dict of values per column [1].\nNaT is a missing date."
    share = language_share(english, "ko")
    assert share == 0.0 and share < IN_LANGUAGE


def test_a_mixed_answer_counts_its_sentences() -> None:
    mixed = "fillna를 쓰세요. It fills missing values. 열마다 다른 값을 줄 수 있습니다."
    assert language_share(mixed, "ko") == 2 / 3
    assert language_share("```\nonly code\n```", "ko") is None


def test_the_answer_prompt_ends_with_the_language_instruction_in_that_language() -> None:
    messages = prompts.answer_messages("NaT와 NaN을 따로 채우려면?", "ko", "learning", [])
    assert str(messages[-1].content).endswith(prompts.ANSWER_IN["ko"])
    english = prompts.answer_messages("How?", "en", "learning", [(1, "t", "x")])
    assert str(english[-1].content).endswith("Cite sources inline as [1]–[1].\nAnswer in English.")


def test_a_korean_answer_prompt_is_written_in_korean_with_sources() -> None:
    # The Korean rephrasing of StackEval's "sort a dict by value" question: with English
    # instructions the 1.5B model copied the template's English headings ("Direct Answer").
    question = "Python 3.6 이상에서 딕셔너리를 값 기준으로 정렬하는 방법"
    messages = prompts.answer_messages(question, "ko", "learning", [(1, "sorted", "x")])
    system, human = str(messages[0].content), str(messages[1].content)
    assert language_share(system, "ko") == 1.0
    assert prompts.ANSWER_TEMPLATES_IN["ko"]["learning"] in system
    assert "Direct answer" not in system and "a direct answer" not in system
    assert human.endswith("자료는 [1]–[1]로 인용하세요.\n" + prompts.ANSWER_IN["ko"])
    assert messages[0].name == "generate_answer"


def test_html_code_and_one_word_labels_are_not_prose_sentences() -> None:
    # The 1.5B model's answers to two Korean rephrasings in
    # tests/fixtures/korean/stackeval_ko20.jsonl (lines 5 and 20): code in <code> tags,
    # and list items labelled with a single name.
    html_code = (
        "<code>\nfrom typing import List\n</code>\n\n"
        "`List`는 Python 타입 힌트를 붙이는 방법입니다. [1]"
    )
    assert language_share(html_code, "ko") == 1.0
    labelled = (
        "1. **Node.js**:\n   Node.js는 `fs` 모듈로 큰 파일을 만들 수 있습니다.\n"
        "2. **Browser**:\n   브라우저에서는 `Blob`으로 파일을 만듭니다."
    )
    assert language_share(labelled, "ko") == 1.0
    # A two-word English label is still a sentence, and English prose still counts.
    assert language_share("**Short answer**:\n`Blob`을 쓰세요.", "ko") == 0.5
