"""Posts served beside StackEval's so that a search meets competition, from public sets.

Stack Overflow has about 24 million questions; StackEval alone, 925, where a title query
finds its own post and nothing else. These sets (a data folder laid out as the project's
shared data is) add programming questions that share words with StackEval's:

- AskUbuntu (`pairs/askubuntu/askubuntu_dup_pairs_val.jsonl`): each distinct title with
  its body; no answer text in the data.
- CoNaLa (`retrieval/conala/conala-train.json`): each Stack Overflow question (its
  title), its snippets as answers; and each annotator's rewrite as a duplicate question
  with its snippet ("conala-rewrites").
- CS1QA (`intent/cs1qa/{corpus,q_dev,q_test}.jsonl`): each distinct student question; no
  answer text.
- chat-langchain (`answers/chat_langchain/qa_dataset_langsmith.jsonl`): each question
  with its reference answer.

A post whose set has no answer text is served with one unaccepted answer saying so: it
competes for a place in the results (a search asks `answers=1`), never with content.
No answer of these sets is marked accepted (the data does not say which one was).
Tags are the set's subject (`ubuntu`, `python`, `langchain`), never guessed from titles.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codeweaver_eval.datasets import DatasetError, read_json_array, read_jsonl
from codeweaver_eval.stackexchange.corpus import Post, build_post

# Above every id a StackEval row can get (its hex prefix + 1,000,000 < 270,000,000).
QUESTION_ID_BASE = 300_000_000
ANSWER_ID_BASE = 400_000_000
NO_ANSWER_TEXT = "_(The data set this question comes from has no answer text.)_"

ASKUBUNTU = Path("pairs/askubuntu/askubuntu_dup_pairs_val.jsonl")
CONALA = Path("retrieval/conala/conala-train.json")
CS1QA = tuple(Path(f"intent/cs1qa/{n}.jsonl") for n in ("corpus", "q_dev", "q_test"))
LANGCHAIN = Path("answers/chat_langchain/qa_dataset_langsmith.jsonl")


@dataclass
class Distractors:
    """The posts, and how many each set gave."""

    posts: list[Post] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    _seen: set[str] = field(default_factory=set, repr=False)
    _answers: int = field(default=0, repr=False)

    def add(
        self,
        set_name: str,
        title: str,
        body: str,
        tags: tuple[str, ...],
        answers: list[str],
    ) -> None:
        """One post, unless its title (case and spacing aside) was served already."""
        title = " ".join(title.split())
        key = title.casefold()
        if not title or key in self._seen:
            return
        self._seen.add(key)
        replies = []
        for text in answers or [NO_ANSWER_TEXT]:
            self._answers += 1
            replies.append((ANSWER_ID_BASE + self._answers, text, False))
        number = len(self.posts) + 1
        self.posts.append(
            build_post(
                f"{set_name}:{number}", QUESTION_ID_BASE + number, title, body, tags, replies
            )
        )
        self.counts[set_name] = self.counts.get(set_name, 0) + 1


def _file(data_dir: Path, relative: Path) -> Path:
    path = data_dir / relative
    if not path.is_file():
        raise DatasetError(path, "missing: distractors are read from the shared data layout")
    return path


def _rows(data_dir: Path, relative: Path) -> Iterator[dict[str, Any]]:
    for _, row in read_jsonl(_file(data_dir, relative)):
        yield row


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def load_distractors(data_dir: Path) -> Distractors:
    """Every distractor post of the sets in `data_dir`, in a fixed order."""
    found = Distractors()
    for row in _rows(data_dir, ASKUBUNTU):
        for side in ("1", "2"):
            found.add(
                "askubuntu", _text(row.get("title" + side)), _text(row.get("body" + side)),
                ("ubuntu",), [],
            )  # fmt: skip
    conala = read_json_array(_file(data_dir, CONALA), "a JSON array (a CoNaLa file)")
    snippets: dict[str, list[str]] = {}
    rewrites: list[tuple[str, str]] = []
    for row in conala:
        if not isinstance(row, dict):
            continue
        intent, snippet = _text(row.get("intent")), _text(row.get("snippet"))
        if intent and snippet:
            code = f"```python\n{snippet}\n```"
            listed = snippets.setdefault(intent, [])
            if code not in listed:
                listed.append(code)
            if rewritten := _text(row.get("rewritten_intent")):
                rewrites.append((rewritten, code))
    for intent, codes in snippets.items():
        found.add("conala", intent, "", ("python",), codes)
    for rewritten, code in rewrites:
        found.add("conala-rewrites", rewritten, "", ("python",), [code])
    for relative in CS1QA:
        for row in _rows(data_dir, relative):
            found.add("cs1qa", _text(row.get("text")), "", ("python",), [])
    for row in _rows(data_dir, LANGCHAIN):
        inputs, outputs = row.get("inputs"), row.get("outputs")
        question = _text(inputs.get("question")) if isinstance(inputs, dict) else ""
        answer = _text(outputs.get("answer")) if isinstance(outputs, dict) else ""
        answers = [answer] if answer else []
        found.add("chat-langchain", question, "", ("python", "langchain"), answers)
    return found
