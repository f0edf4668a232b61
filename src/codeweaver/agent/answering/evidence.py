"""What the answer prompt shows of each source: the closest one whole, the others summarised.

A source that holds the answer must reach the model whole enough to answer from it. With
three sentences of it (420 characters of prose, 1,100 with code) the model filled the gaps
from memory: on held-out Stack Overflow questions whose own accepted answer was the first
source, 13 answers in 22 were wrong or half right. So the best-matching source (the first
after filtering, which is ranked by relevance) is shown whole up to a token budget: the
question it answers, when the source has one, then its text with every code block whole;
prose is cut (the least related paragraphs first) only beyond the budget. The other sources
keep their extractive summary: they are there to be cited, not copied.

Prompt tokens cost time on a local model (prefill runs at about 70–136 tokens/s on two
cores), so the budget is a setting, bounded by what the model's context leaves once the
rest of the prompt and the answer are counted.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from codeweaver.agent.prompts.delimit import before_own_tags
from codeweaver.agent.text import blocks, extractive_summary, sentences
from codeweaver.vocabulary import SearchResult
from codeweaver.words import WORD, overlap
from codeweaver.words.compare import compare_terms, content_terms

# Characters per token of Qwen2.5's tokenizer on Stack Overflow Markdown with code, rounded
# down so that a budget is never exceeded by much.
CHARS_PER_TOKEN = 3.2
# What the answer prompt needs besides the whole source: the instructions, the other
# sources' summaries, the question and the reminders (about 420 tokens measured on average).
PROMPT_RESERVE_TOKENS = 900
# The question a source answers is context, not the answer: at most this share of the budget.
ASKED_SHARE = 0.2
_METADATA_LINE = re.compile(r"\A\[[^\]\n]*\]\n")


def lead_budget(configured: int, context: int, answer_tokens: int) -> int:
    """The tokens the closest source may take: the configured budget, within what the
    model's context leaves after the answer and the rest of the prompt (0: summaries only)."""
    room = context - answer_tokens - PROMPT_RESERVE_TOKENS
    return max(0, min(configured, room))


def _fit(text: str, query: str, max_chars: int) -> str:
    """`text` whole if it fits; else its code blocks whole and the paragraphs that share most
    words with `query` (the first always kept), in their original order."""
    if len(text) <= max_chars:
        return text
    parts = [(c, b) for c, b in blocks(text) if c or WORD.search(b)]  # not "---"
    if not parts:
        return ""
    if not parts[0][0] and len(parts[0][1]) > max_chars:
        # One paragraph longer than the room: its first words, cut at a word.
        parts[0] = (False, parts[0][1][: max(0, max_chars - 1)].rsplit(" ", 1)[0] + "…")
    keep = {0} | {i for i, (is_code, _) in enumerate(parts) if is_code}

    def size(indices: set[int]) -> int:
        return sum(len(parts[i][1]) + 2 for i in indices)

    prose = sorted(
        (i for i, (is_code, _) in enumerate(parts) if not is_code and i),
        key=lambda i: (-overlap(query, parts[i][1]), i),
    )
    for i in prose:
        if size(keep | {i}) <= max_chars:
            keep.add(i)
    return "\n\n".join(parts[i][1] for i in sorted(keep))


def whole_text(result: SearchResult, query: str, budget_tokens: int) -> str:
    """A source as the prompt shows it whole: the question it answers, when it has one, and
    its text, within `budget_tokens` (code blocks are never cut)."""
    max_chars = int(budget_tokens * CHARS_PER_TOKEN)
    # A leading "[accepted · c · 3 votes …]" line is the source's metadata: shown whole,
    # the model copied it into the answer as if it were text.
    body = _METADATA_LINE.sub("", result["snippet"], count=1)
    asked = (result.get("asked") or "").strip()
    if not asked:
        return _fit(body, query, max_chars)
    asked = _fit(asked, query, max(0, int(max_chars * ASKED_SHARE)))
    body = _fit(body, query, max(0, max_chars - len(asked)))
    return f"Question:\n{asked}\n\nAnswer:\n{body}" if asked else body


def prompt_texts(sources: list[SearchResult], query: str, budget_tokens: int) -> list[str]:
    """What the prompt shows of each source, in order: the first whole (within the budget),
    the others as their summary. A budget of 0 gives every source its summary."""
    texts: list[str] = []
    for index, source in enumerate(sources):
        summary = source.get("summary") or extractive_summary(source["snippet"], query)
        if index == 0 and budget_tokens > 0:
            whole = whole_text(source, query, budget_tokens)
            texts.append(whole if len(whole) > len(summary) else summary)
        else:
            texts.append(summary)
    return texts


# Two questions are the same when their content words are the same set, in nearly the same
# order. On CoNaLa's pairs (9,297) this holds for 118 paraphrases and 5 of 2,299 hard
# negatives, each of those five the same question worded apart ("reversing a string" /
# "Reverse a string `string`"); "convert a string to an integer" / "… an integer to a
# string" scores 0.67 and is not the same.
SAME_ORDER = 0.8


def _terms(text: str) -> list[str]:
    return content_terms(compare_terms(text, keep_quoted=True))


def same_question(question: str, result: SearchResult) -> bool:
    """Whether `result` is an answer to this very question: a Q&A answer (it has `asked`)
    whose title says what the question's first line says."""
    if not (result.get("asked") or "").strip() or not question.strip():
        return False
    asked = _terms(question.strip().splitlines()[0])
    title = _terms(result["title"])
    if not asked or set(asked) != set(title):
        return False
    return SequenceMatcher(None, asked, title).ratio() >= SAME_ORDER


# A question in another language is compared through the English form it was searched with,
# which words the question its own way: a looser rule, and the reader is shown the title
# of the question the answer was written for. On CoNaLa's pairs it holds for 45 % of the
# paraphrases, 13 % of the hard negatives (the same words, another question) and none of
# 2,299 random pairs.
CLOSE_TERMS = 0.5
CLOSE_ORDER = 0.5


def close_question(english: str, result: SearchResult) -> bool:
    """Whether `result` is a Q&A answer to a question close to `english` (a translation):
    half the content words shared, in half the same order."""
    if not (result.get("asked") or "").strip() or not english.strip():
        return False
    asked = _terms(english.strip().splitlines()[0])
    title = _terms(result["title"])
    if not asked or not title:
        return False
    shared = len(set(asked) & set(title)) / len(set(asked) | set(title))
    return shared >= CLOSE_TERMS and SequenceMatcher(None, asked, title).ratio() >= CLOSE_ORDER


def answer_as_written(result: SearchResult) -> tuple[str, bool]:
    """A Q&A answer's text as its author wrote it, without the source's metadata line, and
    whether the source cut it short (its text then ends with "…")."""
    text = _METADATA_LINE.sub("", result["snippet"], count=1).strip()
    return text, text.endswith("\n…")


# The lead-in before a quoted answer: a few sentences, no code (the quote has it). The
# embedded model, told so, still rewrote the whole answer with code about one time in two.
LEAD_IN_TOKENS = 160
MAX_LEAD_IN_SENTENCES = 4
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_ENDED = re.compile(r"[.!?。)\]`*_]\s*$")


def lead_in(text: str) -> str:
    """The model's lead-in as the reader gets it: no code blocks, no sentence that only
    introduced one, at most a few sentences, none cut off by the token limit."""
    parts: list[str] = []
    for chunk in _FENCED.split(before_own_tags(text)):
        parts += sentences(" ".join(chunk.split()))
    parts = [s for s in parts if not s.endswith(":")][:MAX_LEAD_IN_SENTENCES]
    if len(parts) > 1 and not _ENDED.search(parts[-1]):
        parts = parts[:-1]  # cut off by the token limit
    return " ".join(parts)
