"""`openai:` models on an OpenAI-compatible server (`OPENAI_BASE_URL`).

The model's decisions (a plan, a route, a grade) decode under their JSON schema there
too, as they do in process: each structured call sends OpenAI's standard
`response_format` of type `json_schema`, which vLLM, LM Studio and `codeweaver model
serve` (which hands it to llama.cpp's grammar) constrain decoding with. Imported only
with the `openai` extra.
"""

from __future__ import annotations

from typing import Any

from langchain_openai import ChatOpenAI


def json_schema_format(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's `response_format` for replies valid under `schema` (not `strict`: that
    mode refuses schemas with defaults or optional fields, which ours have)."""
    return {
        "type": "json_schema",
        "json_schema": {"name": "reply", "schema": schema, "strict": False},
    }


class CompatibleChatOpenAI(ChatOpenAI):
    """`ChatOpenAI` whose structured calls constrain decoding (`SchemaConstrained`)."""

    def schema_kwargs(self, schema: dict[str, Any]) -> dict[str, Any]:
        # In the body as is, beside the instance's own extra fields (a call's
        # `extra_body` replaces them): through `response_format=`, the client would
        # take its parse path, which refuses a reply cut at `max_tokens`.
        return {
            "extra_body": {**(self.extra_body or {}), "response_format": json_schema_format(schema)}
        }
