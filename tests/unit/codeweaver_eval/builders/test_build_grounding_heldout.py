"""`codeweaver_eval.builders.build_grounding_heldout`: held out from the first set, seeded,
labels by construction (StackEval, CC BY-SA 4.0)."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import pytest

from codeweaver_eval.builders import build_grounding_heldout as builder

ROOT = Path(__file__).parents[4]
GROUNDING = ROOT / "tests" / "fixtures" / "grounding"
STACKEVAL = Path("/work/shared/data/intent/stackeval/stack-eval.jsonl")


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.skipif(not STACKEVAL.is_file(), reason="shared StackEval copy not present")
def test_the_fixture_is_what_the_script_builds(tmp_path: Path) -> None:
    out = tmp_path / "heldout.jsonl"
    argv = ["--stackeval", str(STACKEVAL), "--exclude", str(GROUNDING / "stackeval50.jsonl")]
    assert builder.main([*argv, "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == (GROUNDING / "stackeval_heldout.jsonl").read_text(
        encoding="utf-8"
    )


def test_held_out_pairs_differ_only_in_the_false_claim() -> None:
    cases = lines(GROUNDING / "stackeval_heldout.jsonl")
    first = {c["question"] for c in lines(GROUNDING / "stackeval50.jsonl")}
    assert len(cases) == 100 and not first & {c["question"] for c in cases}
    for good, bad in zip(cases[::2], cases[1::2], strict=True):
        assert good["supported"] is True and bad["supported"] is False
        assert good["question"] == bad["question"] and good["sources"] == bad["sources"]
        assert bad["false_claim"] in bad["answer"] and bad["false_claim"] not in good["answer"]
        changed = [
            op
            for op in difflib.SequenceMatcher(
                None, good["answer"].split(), bad["answer"].split(), autojunk=False
            ).get_opcodes()
            if op[0] != "equal"
        ]
        assert len(changed) == 1, (bad["stackeval_line"], changed)


def test_contradictions_change_one_thing() -> None:
    # StackEval line 896's accepted answer (held-out line 2), and its own sentences.
    build = builder
    source = lines(GROUNDING / "stackeval_heldout.jsonl")[1]["sources"][0]["text"]
    sentence = "One way is prefixing all sources with `startWith`"
    assert sentence in source
    assert (
        build.insert_negation(sentence) == "One way is not prefixing all sources with `startWith`"
    )
    assert build.negate("Your `X`, `Y` and `Z` types don't have a common super-type") == (
        "Your `X`, `Y` and `Z` types do have a common super-type"
    )
    assert build.change_version("after the AS 3.3 update", "after the AS 3.3 update") == (
        "after the AS 3.4 update"
    )
    swapped = build.swap_name("the first item of the `Event.path` Array", ["open", "event"])
    assert swapped == "the first item of the `open` Array"
