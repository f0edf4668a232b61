"""`scripted:echo`, and `scripted:echo@Ns`, the same model taking N seconds per answer."""

from __future__ import annotations

import time

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from codeweaver.config import Settings
from codeweaver.llm.registry import ModelConfigError, create_chat_model

ASK = [SystemMessage("Answer.", name="generate_answer"), HumanMessage("<message>hi</message>")]
CLASSIFY = [SystemMessage("Classify.", name="classify_intent"), HumanMessage("hi")]


def test_a_slow_echo_takes_its_time_to_answer_but_not_to_classify() -> None:
    model = create_chat_model("scripted:echo@0.3s", Settings())
    started = time.perf_counter()
    assert model.invoke(ASK).content == "Scripted answer to: hi"
    assert time.perf_counter() - started >= 0.3
    started = time.perf_counter()
    model.invoke(CLASSIFY)
    assert time.perf_counter() - started < 0.3


def test_the_plain_echo_answers_at_once() -> None:
    started = time.perf_counter()
    assert create_chat_model("scripted:echo", Settings()).invoke(ASK).content
    assert time.perf_counter() - started < 0.3


@pytest.mark.parametrize("name", ["echo@", "echo@2", "echo@-1s", "echo@1e9s", "other"])
def test_other_scripted_names_are_refused_with_the_choices(name: str) -> None:
    with pytest.raises(ModelConfigError, match=r"scripted:echo@2s"):
        create_chat_model(f"scripted:{name}", Settings())
