"""What CodeWeaver says to users in its answers, in English and Korean, in one place.

`say(key, language, **fields)` picks the user's language (English when a text has no
translation) and fills the fields. Every text exists in both languages with the same
fields; a test holds that.
"""

from __future__ import annotations

from typing import Any

Texts = dict[str, str]

TEXTS: dict[str, Texts] = {
    # Small talk: the reply when the model's own fails.
    "small_talk": {
        "en": "Hello! I'm CodeWeaver. Ask me a programming question and I'll search and "
        "cite the sources for you.",
        "ko": "안녕하세요! CodeWeaver입니다. 프로그래밍 질문을 주시면 자료를 찾아 출처와 "
        "함께 답해 드릴게요.",
    },
    # Put before a pipeline answer written with no source: nothing backs it.
    "no_source_note": {
        "en": "_No relevant source was found: this answer comes from the model's general "
        "knowledge._",
        "ko": "_관련 자료를 찾지 못해 모델의 일반 지식으로 답했습니다._",
    },
    # A note under a code block that uses an API missing at the installed version.
    "code_missing": {
        "en": "`{name}` does not exist in {where}, installed here.{close}",
        "ko": "`{name}`은(는) 여기 설치된 {where}에 없습니다.{close}",
    },
    "code_missing_unversioned": {
        "en": "`{name}` does not exist in the version installed here.{close}",
        "ko": "`{name}`은(는) 여기 설치된 버전에 없습니다.{close}",
    },
    "code_keyword": {
        "en": "`{name}` takes no keyword `{keyword}`.{close}",
        "ko": "`{name}`에는 `{keyword}` 키워드가 없습니다.{close}",
    },
    "code_python2": {
        "en": "This is Python 2 code ({detail}): it does not run on {where}, installed here.",
        "ko": "Python 2 코드입니다({detail}). 여기 설치된 {where}에서는 실행되지 않습니다.",
    },
    "code_says": {
        "en": " The installed library says: {text}",
        "ko": " 설치된 라이브러리의 설명: {text}",
    },
    "code_close": {
        "en": " Existing names: {names}.",
        "ko": " 있는 이름: {names}.",
    },
    # Put after a librarian answer whose tools found nothing.
    "no_sources_found": {
        "en": "> No sources were found for this question: this answer is from general "
        "knowledge only.",
        "ko": "> 이 질문에 대한 자료를 찾지 못했습니다: 이 답변은 일반 지식에만 근거합니다.",
    },
    "not_written": {
        "en": "I could not write an answer ({reason}).",
        "ko": "답변을 생성하지 못했습니다 ({reason}).",
    },
    "sources_found": {
        "en": "Sources found:\n{listing}",
        "ko": "찾은 자료:\n{listing}",
    },
    "too_many": {
        "en": (
            "You asked {count} questions at once. I answer at most two per message so each "
            "gets a careful, cited answer. You can:\n\n"
            "1. **Merge** them into one question about a single topic,\n"
            "2. **Pick the two** most important ones and ask them together, or\n"
            "3. **Ask one after another** — I keep the conversation, so follow-ups work.\n\n"
            "Your questions:\n{listing}"
        ),
        "ko": (
            "한 번에 {count}개의 질문을 하셨어요. 각 질문에 출처가 있는 충실한 답을 드리기 "
            "위해 한 메시지에 최대 두 개까지 답합니다. 이렇게 해 보세요:\n\n"
            "1. 하나의 주제로 **합쳐서** 질문하기\n"
            "2. 가장 중요한 **두 개만 골라서** 함께 질문하기\n"
            "3. **하나씩 차례로** 질문하기 — 대화가 이어지니 후속 질문도 됩니다.\n\n"
            "질문 목록:\n{listing}"
        ),
    },
    # Under an answer that still contradicts its sources after the rewrite.
    "contradicts_sources": {
        "en": "> **Warning:** parts of this answer contradict the sources they cite.",
        "ko": "> **주의:** 이 답변의 일부는 인용한 자료와 어긋납니다.",
    },
    "may_not_answer": {
        "en": "> It may not fully answer the question.",
        "ko": "> 질문에 충분히 답하지 못했을 수 있습니다.",
    },
}

LANGUAGES = ("en", "ko")


def say(key: str, language: str, **fields: Any) -> str:
    """The text `key` in `language` (English if it has none), its fields filled."""
    texts = TEXTS[key]
    template = texts.get(language, texts["en"])
    return template.format(**fields) if fields else template
