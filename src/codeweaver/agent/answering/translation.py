"""A found answer carried into the question's language: its prose translated, its code as
written.

When a Stack Overflow answer answers this very question, an English reader gets it as its
author wrote it. A Korean reader asked in Korean, and the small model writing a Korean
answer of its own from the English source got 3 of 20 acceptable (the right fix buried,
code cut off, facts changed). Translating is a narrower task than answering: each prose
paragraph goes to the model on its own, code blocks never do, and a paragraph whose
translation lost a name, a number, a link or a piece of inline code, drifted out of the
language, or grew or shrank out of proportion is kept as written: the reader gets the
author's words rather than a changed fact.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel

from codeweaver.agent import prompts
from codeweaver.agent.answering.evidence import CHARS_PER_TOKEN
from codeweaver.agent.prompts.delimit import OWN_TAGS, before_own_tags
from codeweaver.agent.state import Step
from codeweaver.agent.steps import announce, step
from codeweaver.agent.text import blocks
from codeweaver.llm.scripts import has_script, in_language_kwargs
from codeweaver.llm.structured import message_text
from codeweaver.words.language import language_share
from codeweaver.words.markers import CITATION

logger = logging.getLogger(__name__)

_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_URL = re.compile(r"https?://[^\s)>\]]+")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?![\w])")
# A name that is code however it is written: dotted, snake_case, camelCase, a call, a flag.
_NAME = re.compile(
    r"(?<![\w.-])(?:--?[A-Za-z][\w-]*|[A-Za-z_]\w*(?:\.\w+)+(?:\(\))?|\w+_\w+|"
    r"[a-z]+[A-Z]\w*|[A-Z]\w*[a-z]\w*[A-Z]\w*|\w+\(\))"
)
_TAG_LINE = re.compile(
    r"^[ \t]*</?\s*(?:" + "|".join(OWN_TAGS) + r")\b[^>\n]*>[ \t]*$\n?",
    re.MULTILINE | re.IGNORECASE,
)
_WHOLE_FENCE = re.compile(r"```[\w-]*\n(.*?)\n?```", re.DOTALL)
_LETTER = re.compile(r"[^\W\d_]")
# A translation into Korean runs to about 0.6–0.9 of the English characters on Stack
# Overflow prose; outside these bounds it left something out or wandered.
MIN_RATIO, MAX_RATIO = 0.25, 2.0
#: A paragraph's translation counts as in the language when this share of its sentences is.
IN_LANGUAGE = 0.6
# Korean takes about twice the tokens of the English it translates (Qwen2.5's tokenizer).
TOKENS_PER_ENGLISH_TOKEN = 2.5


@dataclass(frozen=True)
class Translation:
    """The translated text, and how many prose paragraphs were translated or kept as
    written (with why, for the steps)."""

    text: str
    translated: int
    kept: list[str]


def must_keep(paragraph: str) -> set[str]:
    """What a faithful translation of `paragraph` carries unchanged: inline code, links,
    numbers and code names."""
    kept = {m.group(1) for m in _INLINE_CODE.finditer(paragraph)}
    prose = _INLINE_CODE.sub(" ", paragraph)
    kept |= {m.group(0) for m in CITATION.finditer(prose)}
    kept |= set(_URL.findall(prose))
    prose = _URL.sub(" ", prose)
    kept |= set(_NUMBER.findall(prose)) | {m.group(0) for m in _NAME.finditer(prose)}
    return kept


def unfaithful(paragraph: str, translated: str, language: str) -> str:
    """Why `translated` cannot stand for `paragraph` ("" when it can)."""
    if not translated.strip():
        return "empty"
    lost = sorted(k for k in must_keep(paragraph) if k not in translated)
    if lost:
        return "lost " + ", ".join(lost[:3])
    if language != "zh" and has_script(translated, "han") and not has_script(paragraph, "han"):
        return "Chinese characters"
    share = language_share(translated, language)
    if share is None or share < IN_LANGUAGE:
        return "not in the language"
    ratio = len(translated) / max(1, len(paragraph))
    if not MIN_RATIO <= ratio <= MAX_RATIO:
        return f"length {ratio:.1f}× the original"
    return ""


def cleaned(reply: str, paragraph: str) -> str:
    """The model's reply without what it wrapped the translation in: our tags echoed back
    (and anything after one), a code fence around the whole paragraph."""
    text = _TAG_LINE.sub("", reply).strip()
    text = before_own_tags(text).strip()
    fenced = _WHOLE_FENCE.fullmatch(text)
    if fenced and "```" not in paragraph:
        text = fenced.group(1).strip()
    return text


def _translatable(paragraph: str, language: str) -> bool:
    """Prose worth translating: a few words, not a lone name, link or rule, and not already
    in the language (a note the answer added in it)."""
    prose = _URL.sub(" ", _INLINE_CODE.sub(" ", paragraph))
    if len(_LETTER.findall(prose)) < 12:
        return False
    share = language_share(paragraph, language)
    return share is None or share < IN_LANGUAGE


Progress = Callable[[int, int], Awaitable[None] | None]


async def translate_answer(
    llm: BaseChatModel,
    text: str,
    language: str,
    question: str,
    progress: Progress | None = None,
) -> Translation:
    """`text` (Markdown) with each prose paragraph translated into `language`, its code
    blocks as written; a paragraph the model cannot translate faithfully stays as it is."""
    parts = blocks(text)
    todo = [
        i
        for i, (is_code, part) in enumerate(parts)
        if not is_code and _translatable(part, language)
    ]
    out = [part for _, part in parts]
    translated, kept = 0, []
    steer = in_language_kwargs(llm, language, question)
    for done, index in enumerate(todo):
        if progress is not None:
            waiting = progress(done + 1, len(todo))
            if waiting is not None:
                await waiting
        paragraph = parts[index][1]
        limit = int(len(paragraph) / CHARS_PER_TOKEN * TOKENS_PER_ENGLISH_TOKEN) + 32
        try:
            reply = await llm.ainvoke(
                prompts.translate_messages(paragraph, language),
                **steer,
                max_tokens=limit,
                temperature=0.0,
            )
            candidate = cleaned(message_text(reply), paragraph)
        except Exception as exc:  # a failing call keeps the author's words
            logger.warning("translation failed: %s", exc)
            candidate, why = "", f"{type(exc).__name__}"
        else:
            why = unfaithful(paragraph, candidate, language)
        if why:
            kept.append(why)
        else:
            out[index] = candidate
            translated += 1
    return Translation("\n\n".join(out), translated, kept)


async def translate_shown(
    llm: BaseChatModel, text: str, state: Mapping[str, Any], node: str, what: str, **data: Any
) -> tuple[str, list[Step]]:
    """`text` translated into the turn's language, each paragraph announced as it starts:
    the text, and the steps shown with a last one saying what was translated and kept."""
    language = state.get("language", "en")
    name = prompts.LANGUAGE_NAMES.get(language, language)
    shown = [step(node, "act", f"translating {what} into {name}", paragraphs=0, **data)]
    announce(state, shown[0])

    def progress(done: int, total: int) -> None:
        message = f"translating {what} into {name}: paragraph {done} of {total}"
        shown.append(step(node, "act", message, paragraph=done, paragraphs=total, **data))
        announce(state, shown[-1])

    done = await translate_answer(llm, text, language, state["question"], progress)
    note = f"{what} translated: {done.translated} paragraphs"
    if done.kept:
        note += f", {len(done.kept)} kept as written ({'; '.join(done.kept)})"
    return done.text, [*shown, step(node, "observe", note, **data)]
