"""Korean answers are kept out of Han ideographs, on the models that support it."""

from __future__ import annotations

from typing import Any

from codeweaver.llm.scripts import (
    Script,
    in_language_kwargs,
    scripts_to_avoid,
    writes_script,
)

# tests/fixtures/korean/stackeval_ko20.jsonl: the 1.5B model's answer to "JavaScript 테스트에서
# 크기가 아주 큰 File 객체를 모킹하는 방법" drifted into "你可以使用 `Blob` API".
DRIFT = "하지만,你可以使用 `Blob` API와"
QUESTION = "JavaScript 테스트에서 크기가 아주 큰 File 객体를 모킹하는 방법"


def test_a_token_writes_han_when_it_holds_a_han_lead_byte() -> None:
    assert writes_script("你".encode(), "han")
    assert writes_script("你".encode()[:1], "han")  # a byte-level piece of one character
    assert writes_script(" 解决".encode(), "han")
    assert not writes_script("방법".encode(), "han")
    assert not writes_script(b"Blob", "han")
    assert not writes_script("。".encode(), "han")  # punctuation is not an ideograph
    assert not writes_script("你".encode()[1:], "han")  # continuation bytes are shared


def test_korean_answers_avoid_han_unless_the_question_writes_it() -> None:
    assert scripts_to_avoid("ko", "JavaScript 테스트에서 큰 File 객체를 모킹하는 방법") == {"han"}
    assert scripts_to_avoid("ko", QUESTION) == frozenset()  # the question holds 体
    assert scripts_to_avoid("en", "How do I decode a string in Python?") == frozenset()
    assert any(writes_script(c.encode(), "han") for c in DRIFT)


class _Steered:
    def __init__(self) -> None:
        self.asked: list[frozenset[Script]] = []

    def script_kwargs(self, avoid: frozenset[Script]) -> dict[str, Any]:
        self.asked.append(avoid)
        return {"logits_processor": ["ban"]}


def test_only_models_that_support_it_get_the_arguments() -> None:
    steered = _Steered()
    assert in_language_kwargs(steered, "ko", "큰 File 객체를 모킹하는 방법") == {
        "logits_processor": ["ban"]
    }
    assert steered.asked == [frozenset({"han"})]
    assert in_language_kwargs(steered, "en", "How?") == {}
    assert steered.asked == [frozenset({"han"})]  # nothing to avoid: not asked
    assert in_language_kwargs(object(), "ko", "큰 File 객체를 모킹하는 방법") == {}
