"""The eval commands' progress: plain lines in a log, nothing with --json."""

from __future__ import annotations

import pytest

from codeweaver_eval.cli.progress import progress


def test_a_log_gets_a_line_every_tenth_and_phases_are_not_lines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with progress(20, quiet=False, label="evaluating") as report:
        assert report is not None
        for done in range(1, 21):
            report(done, 20)
        report(20, 20, "answering with the pipeline")  # a phase, not a finished item
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"evaluating: {n}/20 done" for n in range(2, 21, 2)]


def test_every_item_can_be_a_line_and_quiet_reports_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with progress(3, quiet=False, label="answers", every=1) as report:
        assert report is not None
        report(1, 3, "done")
        report(2, 3, "kept from the earlier run")
    with progress(3, quiet=True) as silent:
        assert silent is None
    err = capsys.readouterr().err
    assert err.splitlines() == ["answers: 1/3 done", "answers: 2/3 kept from the earlier run"]
