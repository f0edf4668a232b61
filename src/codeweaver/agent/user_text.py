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
    # Put before an answer that cites nothing, by what the search found: nothing backs
    # it. One wording for every mode and language.
    "no_source_note": {
        "en": "_No source was found: this answer comes from the model's general knowledge._",
        "ko": "_자료를 찾지 못해 모델의 일반 지식으로 답했습니다._",
    },
    "no_relevant_note": {
        "en": "_Results were found ({count}), none relevant to the question: this answer "
        "comes from the model's general knowledge._",
        "ko": "_자료 {count}건을 찾았지만 질문과 관련 있는 것이 없어 모델의 일반 지식으로 "
        "답했습니다._",
    },
    "none_cited_note": {
        "en": "_Relevant sources were found ({count}), but this answer cites none of them: "
        "it comes from the model's general knowledge._",
        "ko": "_관련 자료 {count}건을 찾았지만 답변이 그중 어느 것도 인용하지 않습니다. 모델의 "
        "일반 지식으로 답했습니다._",
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
    # Above a source's answer quoted as its author wrote it, after the model's lead-in.
    "as_written": {
        "en": "The answer [{n}], as its author wrote it:",
        "ko": "답변 [{n}] 원문:",
    },
    # Before a found answer translated for the reader: its code is the author's.
    "translated": {
        "en": 'The answer [{n}] to the closest question found, "{title}", translated '
        "(its code as written):",
        "ko": '가장 가까운 질문 "{title}"에 달린 답변 [{n}]을 옮깁니다 (코드는 원문 그대로):',
    },
    # Under a quoted answer the source cut short: where to read the rest.
    "as_written_cut": {
        "en": "(The answer goes on: {url})",
        "ko": "(답변 전체: {url})",
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
    # The list of sources after an answer (Markdown doors).
    "sources_heading": {"en": "Sources", "ko": "출처"},
    "also_retrieved": {
        "en": "Also retrieved, not cited: {names}",
        "ko": "함께 찾았지만 인용하지 않은 자료: {names}",
    },
    # Progress: the steps of a run as people read them (see `presentation.progress`).
    "progress_understanding": {"en": "Understanding the question", "ko": "질문을 파악하는 중"},
    "progress_two_questions": {
        "en": "Two questions: answering both side by side",
        "ko": "질문이 두 개입니다: 두 질문에 함께 답하는 중",
    },
    "progress_too_many": {
        "en": "Three or more questions: asking you to choose",
        "ko": "질문이 세 개 이상입니다: 고르실 수 있게 안내하는 중",
    },
    "progress_direct": {"en": "Replying (no search needed)", "ko": "검색 없이 답하는 중"},
    "progress_cache_hit": {
        "en": "Found a checked answer to the same question in the cache",
        "ko": "같은 질문에 대한 검증된 답을 캐시에서 찾았습니다",
    },
    "progress_from_history": {
        "en": "Answering from the conversation so far",
        "ko": "지금까지의 대화를 바탕으로 답하는 중",
    },
    "progress_searching": {"en": "Searching {names}…", "ko": "{names} 검색 중…"},
    "progress_searching_more": {"en": "Also searching {names}…", "ko": "{names}도 검색 중…"},
    "progress_refining": {
        "en": "Too little found: searching again with a refined query",
        "ko": "찾은 것이 적어 검색어를 다듬어 다시 찾는 중",
    },
    "progress_found": {"en": "Found {count}: {parts}", "ko": "{count}건 찾음: {parts}"},
    "progress_found_none": {"en": "Found nothing", "ko": "찾은 자료 없음"},
    "progress_failed": {"en": " · {names} unreachable", "ko": " · {names} 연결 실패"},
    "progress_not_ready": {
        "en": " · {names} still being indexed",
        "ko": " · {names} 색인 작성 중",
    },
    "progress_off": {"en": " · sources off: {count}", "ko": " · 꺼진 자료원 {count}개"},
    "progress_writing": {"en": "Writing the answer", "ko": "답변 작성 중"},
    "progress_translating": {"en": "Translating the answer", "ko": "답변 번역 중"},
    "progress_translating_part": {
        "en": "Translating the answer, paragraph {done} of {total}",
        "ko": "답변 번역 중 (문단 {done}/{total})",
    },
    "progress_writing_from": {
        "en": "Writing the answer (relevant sources: {count})",
        "ko": "관련 자료 {count}건으로 답변 작성 중",
    },
    "progress_still_reading": {
        "en": "Still writing: the model is reading the sources",
        "ko": "아직 작성 중: 모델이 자료를 읽고 있습니다",
    },
    "progress_still_writing": {
        "en": "Still writing: {words} words so far",
        "ko": "아직 작성 중: 지금까지 {words}단어",
    },
    "progress_rewriting": {
        "en": "Rewriting the answer: {why}",
        "ko": "답변을 다시 쓰는 중: {why}",
    },
    "progress_rewriting_code": {
        "en": "Rewriting the code without {names}, which the installed versions lack",
        "ko": "설치된 버전에 없는 {names} 없이 코드를 다시 쓰는 중",
    },
    "progress_checked": {
        "en": "Checked the citations: {supported} of {claims} supported",
        "ko": "인용 확인: {claims}개 중 {supported}개 뒷받침됨",
    },
    "progress_checked_none": {
        "en": "Checked the citations: none to check",
        "ko": "인용 확인: 확인할 인용 없음",
    },
    "progress_citations_removed": {
        "en": ", {count} unsupported removed",
        "ko": ", 뒷받침되지 않는 {count}개 제거",
    },
    "progress_contradictions": {
        "en": ", {count} contradict their source",
        "ko": ", {count}개는 자료와 어긋남",
    },
    "progress_code_ok": {
        "en": "Checked the code against the installed versions: {uses} API uses, none missing",
        "ko": "설치된 버전으로 코드 확인: API 사용 {uses}곳, 없는 것 없음",
    },
    "progress_code_missing": {
        "en": "Checked the code against the installed versions: {found} of {uses} API uses missing",
        "ko": "설치된 버전으로 코드 확인: API 사용 {uses}곳 중 {found}곳이 없음",
    },
    "progress_waiting_for_turn": {
        "en": "Waiting for the answer before this one in the conversation to finish",
        "ko": "이 대화의 앞선 답변이 끝나기를 기다리는 중",
    },
    "progress_waiting": {
        "en": "Waiting for a free slot (place {position} in line)",
        "ko": "빈자리를 기다리는 중 (대기 {position}번째)",
    },
}

# What people call each source; a source missing here is shown by its name.
SOURCE_LABELS: dict[str, Texts] = {
    "stackoverflow": {"en": "Stack Overflow", "ko": "Stack Overflow"},
    "github": {"en": "GitHub", "ko": "GitHub"},
    "github_issues": {"en": "GitHub issues", "ko": "GitHub 이슈"},
    "installed_docs": {"en": "installed docs", "ko": "설치된 문서"},
    "tavily_docs": {"en": "official docs", "ko": "공식 문서"},
    "python_docs": {"en": "Python docs", "ko": "Python 문서"},
    "npm_docs": {"en": "npm package docs", "ko": "npm 패키지 문서"},
    "web": {"en": "the web", "ko": "웹"},
    "knowledge_base": {"en": "knowledge base", "ko": "지식 베이스"},
    "local_code": {"en": "your code", "ko": "내 코드"},
}

LANGUAGES = ("en", "ko")


def source_label(name: str, language: str = "en") -> str:
    """What people call source `name` in `language`."""
    labels = SOURCE_LABELS.get(name)
    if labels is None:
        return name.replace("_", " ")
    return labels.get(language, labels["en"])


def say(key: str, language: str, **fields: Any) -> str:
    """The text `key` in `language` (English if it has none), its fields filled."""
    texts = TEXTS[key]
    template = texts.get(language, texts["en"])
    return template.format(**fields) if fields else template
