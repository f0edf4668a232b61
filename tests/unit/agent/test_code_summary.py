"""Summaries of results with code keep the code whole (a real StackEval accepted answer)."""

from __future__ import annotations

from codeweaver.agent.text import MAX_CODE_SUMMARY_CHARS, code_summary, extractive_summary

# StackEval 530b0a59…: "Detecting if a macro argument is a typename", accepted answer (abridged).
ANSWER = """[accepted · c · 3 votes · question 3 votes]
In order to do this, you will need to check if the parameter is of type integer, and you \
need to check if it is a type or an expression.

---

This can be done with `_Generic`. A `_Generic` expression cannot contain two types that are \
identical, so it should suffice if you compare against all the stdint.h types only.

The trick that I invented just now, is to use the ambiguity between the parenthesis operator \
and the cast operator, and at the same time use the ambiguity between unary + and binary +.

So you can do:

```
#define IS_INT(x) _Generic((x)+0, \\
  uint8_t:  1, int8_t:  1,        \\
  uint64_t: 1, int64_t: 1,        \\
  default: 0)
```

This will work for all integer, character and float types, as well as pointers."""
QUESTION = "Detecting if a macro argument is a typename"


def test_the_first_code_block_is_kept_whole_with_its_introduction() -> None:
    summary = code_summary(ANSWER, QUESTION)
    assert summary.startswith("[accepted · c · 3 votes")
    assert "So you can do:\n\n```\n#define IS_INT(x) _Generic((x)+0, \\" in summary
    assert "  default: 0)\n```" in summary  # the whole block, fence closed
    assert "---" not in summary
    assert len(summary) <= MAX_CODE_SUMMARY_CHARS


def test_the_old_summary_flattened_the_code_away() -> None:
    # What prose-only summarising did to this answer: the macro was lost.
    prose_only = ANSWER.replace("```", "")
    assert "_Generic((x)+0" in extractive_summary(ANSWER, QUESTION)
    assert extractive_summary(ANSWER, QUESTION) == code_summary(ANSWER, QUESTION)
    assert "```" not in extractive_summary(prose_only, QUESTION)


def test_an_oversized_block_is_cut_at_a_line_and_closed() -> None:
    long_code = "```\n" + "\n".join(f"line_{i} = {i}" for i in range(400)) + "\n```"
    summary = code_summary(f"Intro paragraph.\n\n{long_code}\n\nAfter.", "line")
    assert summary.startswith("Intro paragraph.\n\n```\nline_0 = 0\n")
    assert summary.endswith("\n```")
    assert len(summary) <= MAX_CODE_SUMMARY_CHARS + 10
    assert all(line.startswith(("line_", "```", "Intro")) for line in summary.splitlines() if line)
