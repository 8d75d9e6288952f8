"""grade review: the candidates x checks table, --failed-only, --exercise, --diff."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from rich.console import Console

from grader.cli import main
from grader.grading.exercise import get_exercise, project_root
from grader.grading.grade import grade_submission
from grader.cohort.review import diff_scorecards, render_diff, render_review, review_tables
from grader.grading.scorecard import write_scorecard
from mutant_helpers import mutant_file

SAMPLES = project_root() / "submissions" / "samples"


@pytest.fixture(scope="module")
def scorecards(tmp_path_factory):
    out = tmp_path_factory.mktemp("cards")
    paths = {}
    unscaled = mutant_file("attention_scores", "unscaled", out)  # the bank's one-line mistake, as a file
    for label, ex, path in (("ann", "softmax", SAMPLES / "softmax" / "bug_ignores_axis.py"),
                            ("ann2", "softmax", SAMPLES / "softmax" / "bug_default_axis0.py"),
                            ("ben", "softmax", SAMPLES / "softmax" / "correct_logsumexp.py"),
                            ("cat", "attention_scores", unscaled)):
        card = grade_submission(get_exercise(ex), path, sandbox="process", seed=9)
        paths[label] = out / f"{label}.json"
        write_scorecard(card, paths[label])
    return paths


def _text(render, *args) -> str:
    console = Console(width=200, record=True, force_terminal=False)
    render(*args, console)
    return console.export_text()


def test_review_table_rows_columns_and_glyphs(scorecards):
    from grader.cohort.review import load

    cards = load(list(scorecards.values()))
    tables = review_tables(cards)
    assert [t.exercise for t in tables] == ["softmax", "attention_scores"]
    soft = tables[0]
    assert [r.label for r in soft.rows] == ["ben", "ann2", "ann"]  # best score first
    assert soft.checks[0] == "values_1d" and "hidden_values" in soft.hidden
    text = _text(render_review, tables)
    ben_line = next(line for line in text.splitlines() if line.startswith("│ ben"))
    assert "✗" not in ben_line and "✓" in ben_line
    ann2_line = next(line for line in text.splitlines() if line.startswith("│ ann2"))
    assert ann2_line.count("✗") == 1
    assert "=values_nd" in text and "legend:" in text


def test_failed_only_and_exercise_filter(scorecards):
    from grader.cohort.review import load

    cards = load(list(scorecards.values()))
    tables = review_tables(cards, exercise="softmax", failed_only=True)
    assert len(tables) == 1
    assert [r.label for r in tables[0].rows] == ["ann2", "ann"]
    assert "values_1d" not in tables[0].checks and "values_nd" in tables[0].checks


def test_diff_between_two_attempts(scorecards):
    from grader.cohort.review import load

    before, after = load([scorecards["ann"], scorecards["ann2"]])
    diff = diff_scorecards(before, after)
    assert diff.changed and diff.score_after > diff.score_before
    fixed = {c.check for c in diff.changes if c.after == "passed"}
    assert "axes" in fixed and "values_nd" not in fixed
    broke = {c.check for c in diff.changes if c.before == "passed"}
    assert broke == {"values_nd"}
    assert all(c.check != "values_1d" for c in diff.changes)  # unchanged checks are not listed
    text = _text(render_diff, diff)
    assert "axes (fixed)" in text and "now passes" in text
    same = diff_scorecards(before, before)
    assert not same.changed and "same file (identical sha256)" in same.notes


def test_cli_review(scorecards):
    runner = CliRunner()
    assert runner.invoke(main, ["review", "--help"]).exit_code == 0
    result = runner.invoke(main, ["review", *map(str, scorecards.values()), "--exercise", "attention_scores"])
    assert result.exit_code == 0 and "cat" in result.output and "ben" not in result.output
    result = runner.invoke(main, ["review", "--diff", str(scorecards["ann"]), str(scorecards["ann2"])])
    assert result.exit_code == 0 and "score" in result.output
    result = runner.invoke(main, ["review", "--diff", *map(str, scorecards.values())])
    assert result.exit_code == 2 and "exactly two" in result.output
    result = runner.invoke(main, ["review", "--diff", str(scorecards["ann"]), str(scorecards["cat"])])
    assert result.exit_code == 2 and "one exercise" in result.output
