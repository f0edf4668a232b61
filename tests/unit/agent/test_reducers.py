"""The resettable reducer shared by steps, search results and multi_answers."""

from __future__ import annotations

from codeweaver.agent.state import RESET_TOKEN, append_or_reset, is_reset, reset


def test_appends_by_default() -> None:
    assert append_or_reset([1, 2], [3]) == [1, 2, 3]


def test_none_and_empty_are_neutral() -> None:
    assert append_or_reset(None, None) == []
    assert append_or_reset([1], []) == [1]
    assert append_or_reset(None, [1]) == [1]


def test_reset_token_replaces_old_value() -> None:
    assert append_or_reset([1, 2], [RESET_TOKEN, 3, 4]) == [3, 4]
    assert append_or_reset([1, 2], reset()) == []


def test_token_only_counts_in_first_position() -> None:
    # A token later in an update is dropped, never stored, and does not reset.
    assert append_or_reset([1], [2, RESET_TOKEN]) == [1, 2]
    assert append_or_reset([1], [RESET_TOKEN, RESET_TOKEN, 5]) == [5]


def test_seed_token_shape() -> None:
    assert RESET_TOKEN == {"__token__": "__RESET_MULTI_ANS__"}
    assert is_reset({"__token__": "__RESET_MULTI_ANS__"})
    assert not is_reset({"index": 0})


def test_inputs_are_not_mutated() -> None:
    left = [1]
    right = [2]
    append_or_reset(left, right)
    assert left == [1] and right == [2]
