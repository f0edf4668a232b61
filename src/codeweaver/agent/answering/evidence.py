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

from codeweaver.agent.text import blocks, extractive_summary
from codeweaver.vocabulary import SearchResult
from codeweaver.words import WORD, overlap

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
