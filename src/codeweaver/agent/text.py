"""Cheap lexical tools: relevance by term overlap and extractive summaries.

On two CPU cores a model call per search result would dominate the run, so scoring and
summarising kept results is lexical; the model's budget goes to the decisions and the
answer.
"""

from __future__ import annotations

import re

from codeweaver import words as _words

_SENTENCE = re.compile(r"(?<=[.!?。])\s+(?=[A-Z가-힣`(])|\n{2,}")

# Word tools live below every layer (sources score with them too); named here for the
# agent's modules.
STOPWORDS = _words.STOPWORDS
tokens = _words.tokens
overlap = _words.overlap


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


_FENCE_BLOCK = re.compile(r"(```.*?```)", re.DOTALL)
#: A summary of a text with code may be this long: the code is what answers a question.
MAX_CODE_SUMMARY_CHARS = 1100


def _blocks(text: str) -> list[tuple[bool, str]]:
    """Paragraphs and fenced code blocks, in order, as (is_code, text)."""
    found: list[tuple[bool, str]] = []
    for part in _FENCE_BLOCK.split(text):
        if part.startswith("```") and part.endswith("```") and len(part) > 6:
            found.append((True, part.strip()))
        else:
            found += [(False, p.strip()) for p in re.split(r"\n{2,}", part) if p.strip()]
    return found


def _clip_code(block: str, max_chars: int) -> str:
    """A fenced block cut at a line boundary within `max_chars`, its fence closed."""
    if len(block) <= max_chars:
        return block
    lines = block[: max_chars - 4].splitlines()
    return "\n".join(lines[:-1] if len(lines) > 2 else lines) + "\n```"


def code_summary(text: str, query: str, max_chars: int = MAX_CODE_SUMMARY_CHARS) -> str:
    """The lead paragraph, the first code block with the paragraph that introduces it, then
    the paragraphs and blocks that share most words with `query`, in their original order
    and whole (a summary that flattens code into prose loses what answers the question)."""
    blocks = [(c, b) for c, b in _blocks(text) if c or _words.WORD.search(b)]  # not "---"
    first_code = next(i for i, (is_code, _) in enumerate(blocks) if is_code)
    chosen = {0, first_code, max(0, first_code - 1)}

    def size(indices: set[int]) -> int:
        return sum(len(blocks[i][1]) + 2 for i in indices)

    if size(chosen) > max_chars:
        # The must-keep blocks alone are too long: trim the code, keep the lead.
        room = max_chars - size(chosen - {first_code})
        blocks[first_code] = (True, _clip_code(blocks[first_code][1], max(120, room)))
    else:
        ranked = sorted(range(len(blocks)), key=lambda i: (-overlap(query, blocks[i][1]), i))
        for i in ranked:
            if i not in chosen and size(chosen | {i}) <= max_chars:
                chosen.add(i)
    return "\n\n".join(blocks[i][1] for i in sorted(chosen))


def extractive_summary(text: str, query: str, max_sentences: int = 3, max_chars: int = 420) -> str:
    """The leading sentence plus the sentences that share most words with `query`; for a
    text with code, `code_summary`.

    Order is kept so the summary reads as the original did.
    """
    if any(is_code for is_code, _ in _blocks(text)):
        return code_summary(text, query)
    parts = sentences(text)
    if not parts:
        return ""
    if len(parts) <= max_sentences:
        chosen = list(range(len(parts)))
    else:
        ranked = sorted(range(1, len(parts)), key=lambda i: (-overlap(query, parts[i]), i))
        chosen = sorted([0, *ranked[: max_sentences - 1]])
    summary = " ".join(parts[i] for i in chosen)
    if len(summary) > max_chars:
        summary = summary[: max_chars - 1].rsplit(" ", 1)[0] + "…"
    return summary


# Korean particles and endings that attach to a noun ("튜플의", "튜플을" → "튜플").
_KO_SUFFIXES = (
    "에서는",
    "에서",
    "으로",
    "이랑",
    "하고",
    "에게",
    "까지",
    "부터",
    "처럼",
    "의",
    "을",
    "를",
    "은",
    "는",
    "이",
    "가",
    "와",
    "과",
    "에",
    "로",
    "랑",
    "도",
    "만",
)
# Words that name no subject of their own: sharing them says nothing.
_VAGUE_TEXT = """python javascript java rust go typescript language code program difference differ
    different versus vs work works make best way error errors problem 차이 차이점 뭐야 뭔가요
    어떻게 언제 왜 무엇 사용 방법 에러 오류 문제 해결 그리고 또 써 쓰는 해
example examples sample code snippet 예제 예시 코드 보여줘 설명 좀"""
_VAGUE = frozenset(_VAGUE_TEXT.split())


def _stem(word: str) -> str:
    if "가" <= word[0] <= "힣":
        for suffix in _KO_SUFFIXES:
            if len(word) > len(suffix) + 1 and word.endswith(suffix):
                return word[: -len(suffix)]
        return word
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def subject_terms(text: str) -> set[str]:
    """Distinctive words of a question, lightly stemmed, for comparing subjects."""
    return {s for s in (_stem(t) for t in tokens(text)) if s not in _VAGUE and len(s) > 1}


_BACK_REFERENCE = re.compile(
    r"\b(it|its|this|that|these|those|they|them|one)\b|그거|그것|그건|이거|이것|이건|그럼",
    re.IGNORECASE,
)


def share_subject(first: str, second: str) -> bool:
    """Whether two questions are about one thing: they name a common subject, or the
    second refers back to the first ("how do I stop it?") or names nothing of its own."""
    one, two = subject_terms(first), subject_terms(second)
    return bool(one & two) or not one or not two or refers_back(second)


def refers_back(text: str) -> bool:
    """Whether the text points at something said before ("it", "that", "그거")."""
    return bool(_BACK_REFERENCE.search(text))


# Vague words that still name what a follow-up moves to ("what about in Rust?").
_NAMING = frozenset("python javascript java rust go typescript".split())
_FOLLOW_UP_WORDS = frozenset(_KO_SUFFIXES) | {
    "에서는요",
    "는요",
    "은요",
    "요",
    "그럼",
    "그러면",
    "근데",
    "그건",
    "그거",
    "instead",
    "case",
}


def new_terms(text: str, earlier: str) -> set[str]:
    """Words of `text` that name something `earlier` did not: a follow-up's new subject."""
    own = {
        s
        for s in (_stem(t) for t in tokens(text))
        if len(s) > 1 and s not in _FOLLOW_UP_WORDS and (s not in _VAGUE or s in _NAMING)
    }
    return own - {_stem(t) for t in tokens(earlier)}
