"""Citing the source whose code an answer copies (a real StackEval question and answer)."""

from __future__ import annotations

from codeweaver.agent.answering.code_citations import cite_copied_code, copies_code
from codeweaver.agent.answering.grounding import check_grounding
from codeweaver.agent.state import SearchResult

# StackEval "Repeat items in list to required length": its accepted answer, as the
# Stack Overflow source shows it, and the local model's answer that copied it uncited.
SOURCE: SearchResult = {
    "title": "Repeat items in list to required length",
    "url": "https://stackoverflow.com/questions/1/repeat-items-in-list-to-required-length",
    "snippet": (
        "[accepted · python · 3 votes · question 1 votes]\nYou can use `itertools.cycle`\n\n"
        "**Ex:**\n\n```\nfrom itertools import cycle\n\navailable_items_1 = cycle([4, 2])\n"
        "available_items_2 = cycle([9, 3, 12])\n\nn = 4\n\n"
        "print([next(available_items_1)for i in range(n)])\n```"
    ),
    "source": "stackoverflow",
    "score": 1.0,
}
OTHER: SearchResult = {
    "title": "itertools — Functions creating iterators",
    "url": "https://docs.python.org/3/library/itertools.html",
    "snippet": "Make an iterator returning elements from the iterable and saving a copy of each.",
    "source": "installed_docs",
    "score": 0.5,
}
ANSWER = """To repeat items in a list to a required length, you can use `itertools.cycle`. \
This function creates an iterator that repeats its input indefinitely.

Here's a short code example using `itertools.cycle`:

```python
from itertools import cycle

available_items_1 = cycle([4, 2])
available_items_2 = cycle([9, 3, 12])

n = 4

print([next(available_items_1)for i in range(n)])
```

**Output:**

```
[4, 2, 4, 2]
```"""


def test_copied_code_is_cited_once_on_the_sentence_that_introduces_it() -> None:
    cited, added = cite_copied_code(ANSWER, [OTHER, SOURCE])
    assert added == [2]
    assert "Here's a short code example using `itertools.cycle` [2]:" in cited
    assert cited.count("[2]") == 1
    assert "[1]" not in cited  # the docs page's code is not in the answer
    # Code and the rest of the prose are untouched.
    assert cited.replace(" [2]:", ":") == ANSWER


def test_code_written_by_the_model_is_not_cited() -> None:
    own = (
        "Use a comprehension:\n\n"
        "```python\nrepeated = [items[i % len(items)] for i in range(n)]\n```"
    )
    assert cite_copied_code(own, [SOURCE]) == (own, [])
    # A short shared line ("n = 4") is chance, not copying.
    assert not copies_code("```python\nn = 4\nx = 1\n```", SOURCE)


def test_an_existing_citation_is_kept_as_it_is() -> None:
    already = ANSWER.replace("`itertools.cycle`:", "`itertools.cycle` [1]:")
    cited, added = cite_copied_code(already, [SOURCE])
    assert (cited, added) == (already, [])


async def test_the_grounding_check_lets_the_code_citation_stand() -> None:
    cited, _ = cite_copied_code(ANSWER, [SOURCE])
    report = await check_grounding(None, SOURCE["title"], cited, [SOURCE])
    intro = [v for v in report.verdicts if v.claim.plain.endswith("`itertools.cycle`:")]
    assert len(intro) == 1 and intro[0].supported
    assert intro[0].reason == "it introduces code copied from the cited source"


async def test_a_prose_claim_citing_the_same_source_is_still_checked() -> None:
    prose = "Here's how [1]. It runs in constant memory and never copies the list [1]."
    report = await check_grounding(None, SOURCE["title"], prose + "\n\n" + ANSWER, [SOURCE])
    assert not any(
        v.reason == "it introduces code copied from the cited source" for v in report.verdicts
    )


def test_a_heading_right_above_the_code_is_its_introduction() -> None:
    # A real Korean answer (mocking a large File): heading and fence in one paragraph.
    source: SearchResult = {
        **SOURCE,
        "snippet": (
            "[accepted · javascript]\n```\nconst file = new File([\"\"], 'darthvader.png');\n"
            "Object.defineProperty(file, 'size', { value: 1024 * 1024 + 1 });\n```"
        ),
    }
    answer = (
        "### 질문에 대한 답\n\n#### 1. `Object.defineProperty` 사용\n```javascript\n"
        "const file = new File([\"\"], 'darthvader.png');\n"
        "Object.defineProperty(file, 'size', { value: 1024 * 1024 + 1 });\n```"
    )
    cited, added = cite_copied_code(answer, [source])
    assert added == [1]
    assert "#### 1. `Object.defineProperty` 사용 [1]\n```javascript" in cited


async def test_a_heading_citation_is_not_a_claim_to_check() -> None:
    source: SearchResult = {
        **SOURCE,
        "snippet": (
            "[accepted · javascript]\n```\nconst file = new File([\"\"], 'darthvader.png');\n"
            "Object.defineProperty(file, 'size', { value: 1024 * 1024 + 1 });\n```"
        ),
    }
    answer = (
        "#### 1. `Object.defineProperty` 사용 [1]\n```javascript\n"
        "const file = new File([\"\"], 'darthvader.png');\n"
        "Object.defineProperty(file, 'size', { value: 1024 * 1024 + 1 });\n```"
    )
    report = await check_grounding(None, "큰 File 모킹", answer, [source], by_words=False)
    assert report.verdicts == [] and report.unsupported == []
