"""grade regrade (issue 21, item 4): a batch graded, the grader changed (a check judged differently,
a new grader version), the regrade keeps both scorecards, shows what changed, and only --accept
changes what stands."""

from __future__ import annotations

import csv
import io
import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.cohort import regrade as regrade_mod
from grader.cohort.batch import batch
from grader.cohort.regrade import ORIGINAL, RegradeRefused, accept, compare, regrade_batch
from grader.cohort.review import load
from grader.grading import grade as grading
from grader.grading.scorecard import read_scorecard
from grader.judge.judges import Outcome
from grader.judge.verdicts import Verdict

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "submissions" / "samples" / "softmax"
NOW = datetime(2026, 12, 1, 21, 30, tzinfo=timezone.utc)


@pytest.fixture
def graded(tmp_path):
    """A flat softmax cohort graded at seed 5: ann (correct), ben (ignores the axis)."""
    root = tmp_path / "cohort"
    root.mkdir()
    shutil.copyfile(SAMPLES / "correct_logsumexp.py", root / "ann.py")
    shutil.copyfile(SAMPLES / "bug_ignores_axis.py", root / "ben.py")
    out = tmp_path / "out"
    batch(root, out, exercise="softmax", jobs=1, sandbox="process", seed=5)
    return root, out


@pytest.fixture
def stricter_grader(monkeypatch):
    """The grader after a "fix": check ``axes`` now fails every case, and the version is 0.1.1."""
    real = grading._judge_all

    def judge_all(*args, **kwargs):
        outcomes = real(*args, **kwargs)
        outcomes["axes"] = [(case, Outcome(Verdict.FAILED, "judged stricter after the fix"))
                            for case, _o in outcomes.get("axes", [])]
        return outcomes

    monkeypatch.setattr(grading, "_judge_all", judge_all)
    monkeypatch.setattr(grading, "__version__", "0.1.1")
    monkeypatch.setattr(regrade_mod, "__version__", "0.1.1")


def test_regrade_keeps_both_scorecards_and_tables_what_changed(graded, stricter_grader):
    root, out = graded
    ann_before = (out / "softmax" / "ann.json").read_bytes()
    record = json.loads((out / "batch.json").read_text())
    assert record["seed"] == 5 and record["root"] == str(root.resolve())
    result = regrade_batch(out, jobs=1, sandbox="process", now=NOW)
    assert result.tag == "20261201T213000Z-0.1.1" and result.seed == 5
    by = {c.candidate: c for c in result.changes}
    ann, ben = by["ann"], by["ben"]
    axes_points = next(c.max_points for c in read_scorecard(out / "softmax" / "ann.json").checks if c.id == "axes")
    assert ann.score_before == ann.max_score and ann.score_after == ann.max_score - axes_points
    assert ann.checks == (("axes", "passed", "failed"),) and ann.changed
    assert "grader version changed: 0.1.0 -> 0.1.1" in ann.notes
    # ben already failed axes (it ignores the axis): the same verdict, so no check changed for him
    assert ben.checks == () and ben.score_after == ben.score_before and not ben.changed
    # both kept, nothing that stands touched
    assert (out / "softmax" / "ann.json").read_bytes() == ann_before
    folder = out / ".regrades" / result.tag
    after = read_scorecard(folder / "after" / "softmax" / "ann.json")
    assert after.grader_version == "0.1.1" and after.seed == 5
    assert (folder / "before" / "softmax" / "ann.json").read_bytes() == ann_before
    rows = list(csv.DictReader(io.StringIO((folder / "changes.csv").read_text())))
    assert [(r["candidate"], r["changed"], r["checks_changed"]) for r in rows] == [
        ("ann", "yes", "axes: passed -> failed"), ("ben", "no", "")]
    # grade review OUT still reads only what stands: two cards, the originals
    assert sorted((label, c.grader_version) for label, c in load([out])) == [("ann", "0.1.0"), ("ben", "0.1.0")]
    record = json.loads((out / "batch.json").read_text())
    assert record["standing"] == ORIGINAL and record["regrades"][0]["tag"] == result.tag
    assert record["regrades"][0]["changed"] == 1

    # the interviewer chooses: the regrade stands, then the original again; nothing is lost
    assert accept(out, result.tag) == [out / "softmax" / "ann.json", out / "softmax" / "ben.json"]
    assert read_scorecard(out / "softmax" / "ann.json").score == ann.score_after
    summary = {r["candidate"]: r for r in csv.DictReader(io.StringIO((out / "summary.csv").read_text()))}
    assert float(summary["ann"]["score"]) == ann.score_after
    assert json.loads((out / "batch.json").read_text())["standing"] == result.tag
    accept(out, ORIGINAL)
    assert (out / "softmax" / "ann.json").read_bytes() == ann_before
    assert json.loads((out / "batch.json").read_text())["standing"] == ORIGINAL


def test_a_second_regrade_never_overwrites_the_first(graded, stricter_grader):
    _root, out = graded
    first = regrade_batch(out, jobs=1, sandbox="process", now=NOW)
    second = regrade_batch(out, jobs=1, sandbox="process", now=NOW)
    assert second.tag == first.tag + "-2"
    assert (first.folder / "after" / "softmax" / "ann.json").exists()
    assert [r["tag"] for r in json.loads((out / "batch.json").read_text())["regrades"]] == [first.tag, second.tag]


def test_a_changed_file_is_not_regraded_and_says_why(graded):
    root, out = graded
    (root / "ben.py").write_text((root / "ben.py").read_text() + "\n# edited after grading\n")
    result = regrade_batch(out, jobs=1, sandbox="process", now=NOW)
    assert [c.candidate for c in result.changes] == ["ann"] and not result.changes[0].changed
    assert result.not_regraded == [("softmax/ben", f"{root / 'ben.py'} changed since it was graded (its sha256 differs)")]


def test_refusals_are_usage_errors(tmp_path, graded):
    with pytest.raises(RegradeRefused, match="not a grade batch output folder"):
        regrade_batch(tmp_path)
    _root, out = graded
    with pytest.raises(RegradeRefused, match="no regrade 'nope'"):
        accept(out, "nope")
    with pytest.raises(RegradeRefused, match="original scorecards already stand"):
        accept(out, ORIGINAL)


def test_compare_lists_only_verdict_changes(graded):
    _root, out = graded
    card = read_scorecard(out / "softmax" / "ann.json")
    same = compare("ann", card, card)
    assert not same.changed and same.checks == ()


def test_cli_regrade_prints_the_table_and_accept(graded, stricter_grader):
    _root, out = graded
    runner = CliRunner()
    result = runner.invoke(main, ["regrade", str(out), "--sandbox", "process", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert "axes: passed -> failed" in result.output and "2 submissions regraded at seed 5, 1 changed" in result.output
    tag = json.loads((out / "batch.json").read_text())["regrades"][0]["tag"]
    assert f"--accept {tag}" in result.output
    accepted = runner.invoke(main, ["regrade", str(out), "--accept", tag])
    assert accepted.exit_code == 0 and "2 scorecards replaced" in accepted.output
    bad = runner.invoke(main, ["regrade", str(out), "--accept", "nope"])
    assert bad.exit_code == 2 and bad.output.startswith("error: ")


def test_a_grader_fault_of_the_regrade_is_tabled_but_never_made_to_stand(graded, monkeypatch):
    _root, out = graded
    real = grading.grade_submission

    def faulty(exercise, path, **kwargs):
        if Path(path).stem == "ben":
            raise RuntimeError("engine gone")
        return real(exercise, path, **kwargs)

    monkeypatch.setattr(grading, "grade_submission", faulty)
    ben_before = (out / "softmax" / "ben.json").read_bytes()
    result = regrade_batch(out, jobs=1, sandbox="process", now=NOW)
    ben = next(c for c in result.changes if c.candidate == "ben")
    assert ben.status_after == "infrastructure_error" and ben.changed
    assert accept(out, result.tag) == [out / "softmax" / "ann.json"]
    assert (out / "softmax" / "ben.json").read_bytes() == ben_before
