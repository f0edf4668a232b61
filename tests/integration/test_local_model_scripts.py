"""The embedded model, kept out of Han ideographs for a Korean answer (real llama.cpp)."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from codeweaver.config import Settings
from codeweaver.llm.local import LocalChatModel
from codeweaver.llm.registry import create_chat_model
from codeweaver.llm.scripts import has_script
from codeweaver.llm.vocab import read_vocabulary, token_bytes

pytestmark = pytest.mark.integration


def test_han_tokens_are_never_decoded_and_hangul_ones_still_are() -> None:
    settings = Settings()
    model = create_chat_model(settings.model, settings)
    assert isinstance(model, LocalChatModel)
    kwargs = model.script_kwargs(frozenset({"han"}))
    banned = {token for token, allowed in kwargs["logit_bias"] if allowed is False}
    kind, tokens = read_vocabulary(model.model_path)
    written = {i: token_bytes(t, kind) for i, t in enumerate(tokens)}
    assert {i for i, b in written.items() if b == "你".encode()} <= banned
    hangul = {i for i, b in written.items() if b in {"니다".encode(), " 수".encode()}}
    assert len(hangul) == 2 and not hangul & banned
    # A request the model would answer in Chinese: the reply holds no Han character.
    prompt = [HumanMessage("请只用中文回答：Python 的列表是什么？")]
    free = model.invoke(prompt, max_tokens=24).content
    steered = model.invoke(prompt, max_tokens=24, **kwargs).content
    assert isinstance(free, str) and isinstance(steered, str)
    assert has_script(free, "han"), free  # the test can fail: unsteered, it writes Chinese
    assert steered.strip() and not has_script(steered, "han"), steered
