"""What counts as a word, one regular expression per purpose.

Each tool reads words differently on purpose, and each was tuned and measured with its own:
overlap scoring keeps Hangul words, the docs index keeps dotted names whole, the cache check
keeps `c++` and `datetime.date`, the code scan matches any `\\w` run. They are not merged.
"""

from __future__ import annotations

import re

# --- overlap scoring and subject comparison (`overlap.tokens`) ---------------------------

#: A Latin or Hangul word.
WORD = re.compile(r"[A-Za-z0-9]+|[가-힣]+")
#: Where a camelCase identifier splits ("parseHeader" → "parse Header").
OVERLAP_CAMEL_SPLIT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# --- the installed-docs BM25 index (`sources.installed_docs.tokenizer`) ------------------

#: A word or dotted name (`os.path.join`), or a number of two digits or more.
DOC_SEARCH_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|[0-9]{2,}")
#: The pieces of one identifier part: `TextIOBase` → `Text`, `IO`, `Base`.
DOC_SEARCH_PIECE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

# --- the cache verifier and the grounding check (`compare`) ------------------------------

#: A backticked or quoted name or value: a placeholder, set aside when comparing questions.
PLACEHOLDER = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"")
#: A lowercased word; dotted names stay whole: "datetime.date" is not "datetime.datetime".
COMPARE_WORD = re.compile(r"[a-z_][a-z0-9_+#]*(?:\.[a-z_][a-z0-9_]*)*|\d+(?:\.\d+)*")

# --- what a translation dropped (`compare.lost_in_translation`) --------------------------

#: A number or version ("3", "3.12").
TRANSLATION_NUMBER = re.compile(r"\d+(?:\.\d+)*")
#: A Latin-script term: a name, `c++`, `node.js`, or a single letter.
TRANSLATION_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9+#.]*[A-Za-z0-9+#]|[A-Za-z]")

# --- the local code scan (`sources.code_scan`, `sources.code_scan_terms`) ----------------

#: An identifier as code writes it.
CODE_SEARCH_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Where a camelCase or an acronym-led identifier splits ("HTTPServer" → "HTTP Server").
CODE_SEARCH_CAMEL_SPLIT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: A word of a phrase or of a line of code: any run of word characters.
CODE_SEARCH_WORD = re.compile(r"\w+")
