"""The embedded model's runtime without loading weights: the chat model over a stand-in for
llama.cpp's native server (its calls and replies as the real one makes them), the vocabulary
read from a small GGUF written by llama.cpp's own `gguf` package, and the signal handlers
kept across the server's start."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gguf
import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from codeweaver.llm.llama_runtime import LocalModelError, _kept_signal_handlers, reply_error
from codeweaver.llm.local import LocalChatModel
from codeweaver.llm.vocab import script_token_ids, token_bytes

RECORDED = Path(__file__).parents[2] / "fixtures" / "native_server"
COMPLETION = json.loads((RECORDED / "completion.json").read_text())
GRAMMAR_REFUSED = json.loads((RECORDED / "grammar_refused.json").read_text())
# The streamed reply as the binding hands it to the callback: each SSE event's JSON.
PARTS = [
    json.loads(line.removeprefix("data: "))
    for line in (RECORDED / "stream.txt").read_text().splitlines()
    if line.startswith("data: {")
]
USAGE_PART = {"choices": [], "object": "chat.completion.chunk", "usage": COMPLETION["usage"]}


class NativeServer:
    """Stands in for `xllamacpp.Server`: records each request, replies as recorded."""

    def __init__(self, parts: list[dict[str, Any]], reply: dict[str, Any]) -> None:
        self.parts, self.reply = parts, reply
        self.requests: list[dict[str, Any]] = []
        self.delivered = 0
        self.stopped_early = False

    def handle_chat_completions(
        self, body: dict[str, Any], callback: Callable[[dict[str, Any]], bool] | None = None
    ) -> dict[str, Any] | None:
        self.requests.append(body)
        if callback is None:
            return self.reply
        for part in self.parts:
            self.delivered += 1
            if callback(part):
                self.stopped_early = True
                return None
        return None


def model_on(server: NativeServer, tmp_path: Path) -> LocalChatModel:
    model = LocalChatModel(model_path=tmp_path / "m.gguf", max_tokens=5)
    model._server = server
    return model


def test_an_answer_carries_its_text_and_usage(tmp_path: Path) -> None:
    server = NativeServer([], COMPLETION)
    reply = model_on(server, tmp_path).invoke([SystemMessage("Be brief."), HumanMessage("Hi")])
    assert reply.content == "Hello! How can I"
    assert reply.usage_metadata is not None
    assert (reply.usage_metadata["input_tokens"], reply.usage_metadata["output_tokens"]) == (20, 5)
    body = server.requests[0]
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]
    assert (body["max_tokens"], body["seed"], body["repeat_penalty"]) == (5, 0, 1.1)


def test_a_stream_yields_the_tokens_then_the_usage(tmp_path: Path) -> None:
    server = NativeServer([*PARTS, USAGE_PART], COMPLETION)
    chunks = list(model_on(server, tmp_path).stream("Hi"))
    assert "".join(str(c.content) for c in chunks) == "Hello! How can I"
    used = [c.usage_metadata for c in chunks if c.usage_metadata]
    assert used and used[-1]["input_tokens"] == 20 and used[-1]["output_tokens"] == 5
    body = server.requests[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_a_reader_that_stops_early_stops_the_decoding(tmp_path: Path) -> None:
    gate = threading.Event()
    parts = list(PARTS)

    class Slow(NativeServer):
        def handle_chat_completions(self, body: Any, callback: Any = None) -> Any:
            for part in parts:
                self.delivered += 1
                if callback(part):
                    self.stopped_early = True
                    gate.set()
                    return None
                time.sleep(0.05)
            gate.set()
            return None

    server = Slow([], COMPLETION)
    stream = model_on(server, tmp_path).stream("Hi")
    first = next(stream)
    assert first.content == "Hello"
    stream.close()
    assert gate.wait(5)
    assert server.stopped_early and server.delivered < len(parts)


def test_what_llama_cpp_refuses_is_raised_with_its_words(tmp_path: Path) -> None:
    with pytest.raises(LocalModelError, match="failed to parse grammar"):
        model_on(NativeServer([], GRAMMAR_REFUSED), tmp_path).invoke("Hi")
    with pytest.raises(LocalModelError, match="failed to parse grammar"):
        list(model_on(NativeServer([GRAMMAR_REFUSED], COMPLETION), tmp_path).stream("Hi"))
    assert reply_error(COMPLETION) is None and reply_error(PARTS[0]) is None
    assert reply_error({"code": 500, "type": "server_error", "message": "bad"}) == "bad"


def write_gguf(path: Path, kind: str, tokens: list[str]) -> None:
    writer = gguf.GGUFWriter(path, "qwen2")
    writer.add_tokenizer_model(kind)
    writer.add_token_list(tokens)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


# Byte-level BPE spellings, as in Qwen2.5's vocabulary: 你好, 方法 (Hangul), " the", Grüße.
GPT2_TOKENS = ["ä½łå¥½", "ë°©ë²ķ", "Ġthe", "GrÃ¼ÃŁe", "<|im_start|>", "ä"]


def test_byte_level_tokens_are_read_as_the_bytes_they_write() -> None:
    assert token_bytes("ä½łå¥½", "gpt2") == "你好".encode()
    assert token_bytes("ë°©ë²ķ", "gpt2") == "방법".encode()
    assert token_bytes("Ġthe", "gpt2") == b" the"
    assert token_bytes("GrÃ¼ÃŁe", "gpt2") == "Grüße".encode()
    assert token_bytes("<0xE4>", "llama") == b"\xe4"
    assert token_bytes("\u2581the", "llama") == b" the"


def test_han_token_ids_come_from_the_gguf_and_are_kept(tmp_path: Path) -> None:
    weights = tmp_path / "tiny.gguf"
    write_gguf(weights, "gpt2", GPT2_TOKENS)
    cache = tmp_path / "cache"
    assert script_token_ids(weights, "han", cache) == [0, 5]  # not Hangul, not German
    kept = cache / "tiny.han-tokens.json"
    assert json.loads(kept.read_text())["ids"] == [0, 5]
    # Kept: a second call does not read the GGUF again (its tokens changed in place).
    stat = weights.stat()
    write_gguf(weights, "gpt2", ["Ġthe", "ä½łå¥½"])
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    if weights.stat().st_size == stat.st_size:
        assert script_token_ids(weights, "han", cache) == [0, 5]
    # Changed weights (another size or time) are read again.
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert script_token_ids(weights, "han", cache) == [1]


def test_an_unreadable_vocabulary_bans_nothing(tmp_path: Path) -> None:
    weights = tmp_path / "broken.gguf"
    weights.write_bytes(b"not a gguf file")
    assert script_token_ids(weights, "han", tmp_path) == []


def test_the_model_asks_llama_cpp_not_to_write_han(tmp_path: Path) -> None:
    weights = tmp_path / "tiny.gguf"
    write_gguf(weights, "gpt2", GPT2_TOKENS)
    model = LocalChatModel(model_path=weights, cache_dir=tmp_path)
    assert model.script_kwargs(frozenset()) == {}
    kwargs = model.script_kwargs(frozenset({"han"}))
    assert kwargs == {"logit_bias": [[0, False], [5, False]]}
    body = model._body([HumanMessage("x")], None, kwargs)
    assert body["logit_bias"] == [[0, False], [5, False]]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's struct sigaction")
def test_signal_handlers_in_place_before_the_server_are_put_back() -> None:
    heard: list[int] = []
    before = signal.signal(signal.SIGTERM, lambda number, frame: heard.append(number))
    libc = ctypes.CDLL(None, use_errno=True)
    ignore = ctypes.create_string_buffer(512)
    ctypes.memmove(ignore, ctypes.byref(ctypes.c_void_p(1)), 8)  # sa_handler = SIG_IGN

    def replace_in_another_thread() -> None:  # as llama.cpp's server thread does
        assert libc.sigaction(signal.SIGTERM, ignore, None) == 0

    try:
        with _kept_signal_handlers():
            worker = threading.Thread(target=replace_in_another_thread)
            worker.start()
            worker.join()
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.monotonic() + 2
        while not heard and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        signal.signal(signal.SIGTERM, before)
    assert heard == [signal.SIGTERM]
