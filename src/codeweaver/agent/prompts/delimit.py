"""The one way untrusted text enters a prompt: inside a tag, unable to close it.

A prompt marks data (the user's message, search results, earlier turns, drafts, model
output fed back) with our own tags and tells the model that tagged text is data. Text
that itself contains `</source>` or `<message>` could end that block and speak as the
prompt, so every untrusted text goes through `defuse`, directly or via `data_block`.

The rule: a `<` that starts one of OUR tag names (`OWN_TAGS`, any case, optional `/` and
spaces, e.g. `</source>`, `< MESSAGE`, `</ history>`) becomes `‹` (U+2039). Nothing else
changes: `a < b`, `List<String>`, `<div>`, `<sources>` or `<source_code>` stay as
written, so code reads as it was.
"""

from __future__ import annotations

import re

#: Every tag a prompt uses to delimit data (pipeline and librarian alike).
OWN_TAGS = (
    "message",
    "source",
    "history",
    "previous_answer",
    "claim",
    "excerpt",
    "review",
    "step",
    "observation",
)
# `(?![\w-])`: the name ends there, so `<sources>` or `<source-map>` are not our tags.
_OWN_TAG = re.compile(r"<(?=\s*/?\s*(?:" + "|".join(OWN_TAGS) + r")(?![\w-]))", re.IGNORECASE)
DEFUSED = "‹"


def defuse(text: str) -> str:
    """`text` with every `<` that starts one of our tags turned into `‹`."""
    return _OWN_TAG.sub(DEFUSED, text)


def before_own_tags(text: str) -> str:
    """`text` up to the first of our tags: a reply that writes one has drifted into the
    prompt's structure, and nothing after it is an answer."""
    found = _OWN_TAG.search(text)
    return text if found is None else text[: found.start()]


def attribute_value(text: str) -> str:
    """Untrusted text as a tag attribute: one line, no double quote, our tags defused."""
    return defuse(" ".join(text.replace('"', "'").split()))


def data_block(tag: str, text: str, **attributes: object) -> str:
    """`text` between `<tag …>` and `</tag>` on lines of their own, defused.

    `tag` must be one of `OWN_TAGS`; attribute values are untrusted too.
    """
    if tag not in OWN_TAGS:
        raise ValueError(f"{tag!r} is not a delimiting tag; add it to OWN_TAGS")
    attrs = "".join(f' {name}="{attribute_value(str(v))}"' for name, v in attributes.items())
    return f"<{tag}{attrs}>\n{defuse(text)}\n</{tag}>"
