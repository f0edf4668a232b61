"""A tiny random-weight GGUF (llama architecture, under 0.5 MB): llama.cpp loads it in well
under a second, so `codeweaver model serve` can run in a test without the real weights.
Its answers are noise; only what the server does with a request is worth asserting."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

# Byte tokens cover any text; the chat markers let the template's turns tokenize.
_WORDS = ["▁", "a", "b", "c", "{", "}", '"', ":", ",", " ", "x", "y", "1", "2"]
_MARKERS = ["<|im_start|>", "<|im_end|>"]
_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_EMBED, _HEADS, _LAYERS, _FF = 64, 4, 2, 128


def write_tiny_gguf(path: Path) -> Path:
    """Write the model to `path` (same bytes every time) and return `path`."""
    rng = np.random.default_rng(0)
    tokens = ["<unk>", "<s>", "</s>", *(f"<0x{i:02X}>" for i in range(256)), *_WORDS, *_MARKERS]
    unknown, control, normal, user, byte = 2, 3, 1, 4, 6  # llama.cpp's token types
    types = [unknown, control, control, *[byte] * 256, *[normal] * len(_WORDS)]
    types += [user] * len(_MARKERS)

    def weights(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    def ones() -> np.ndarray:
        return np.ones(_EMBED, np.float32)

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny-random")
    writer.add_context_length(4096)
    writer.add_embedding_length(_EMBED)
    writer.add_block_count(_LAYERS)
    writer.add_feed_forward_length(_FF)
    writer.add_head_count(_HEADS)
    writer.add_head_count_kv(_HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(_EMBED // _HEADS)
    writer.add_file_type(0)  # all F32
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * len(tokens))
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_chat_template(_TEMPLATE)
    writer.add_tensor("token_embd.weight", weights(len(tokens), _EMBED))
    writer.add_tensor("output_norm.weight", ones())
    writer.add_tensor("output.weight", weights(len(tokens), _EMBED))
    for i in range(_LAYERS):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", ones())
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"blk.{i}.{name}.weight", weights(_EMBED, _EMBED))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", ones())
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", weights(_FF, _EMBED))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", weights(_FF, _EMBED))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", weights(_EMBED, _FF))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
