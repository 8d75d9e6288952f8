"""`grade new ID --track T`: the scaffold loads, its self-check runs at once and says what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.cohort.selfcheck import run_selfcheck
from grader.grading.exercise import get_exercise
from grader.grading.scaffold import ScaffoldError, scaffold_exercise


@pytest.mark.parametrize("track, module", [("numpy", "import numpy as np"), ("torch", "import torch")])
def test_new_writes_a_loadable_exercise_in_its_track(tmp_path, track, module):
    result = CliRunner(env={"GRADER_HOME": str(tmp_path)}).invoke(main, ["new", "layer_norm", "--track", track,
                                                                         "--entry", "layer_norm_fn"])
    assert result.exit_code == 0, result.output
    assert "grade selfcheck layer_norm" in result.output
    ex = get_exercise("layer_norm", tmp_path)
    assert (ex.framework, ex.tracks, ex.entry_points) == (track, (track,), ("layer_norm_fn",))
    assert [c.id for c in ex.checks] == ["values", "hidden_values"]
    assert module in ex.stub_path.read_text() and module in ex.reference_path.read_text()
    plan = ex.build_plan(0, 5)
    assert {s.check for s in plan.steps} == {"values", "hidden_values"}
    assert plan.uses_torch() == (track == "torch")
    assert (tmp_path / "submissions" / "samples" / "layer_norm").is_dir()


def test_new_refuses_bad_ids_and_existing_exercises(tmp_path):
    runner = CliRunner(env={"GRADER_HOME": str(tmp_path)})
    assert runner.invoke(main, ["new", "ok_id", "--track", "numpy"]).exit_code == 0
    again = runner.invoke(main, ["new", "ok_id", "--track", "torch"])
    assert again.exit_code == 2 and "already exists" in again.output
    for bad in (["new", "Bad-Id", "--track", "numpy"], ["new", "x", "--track", "numpy", "--entry", "class"],
                ["new", "y", "--track", "jax"], ["new", "z"]):
        assert runner.invoke(main, bad).exit_code == 2, bad
    with pytest.raises(ScaffoldError, match="track must be one of"):
        scaffold_exercise(tmp_path, "w", "jax")


def test_selfcheck_of_a_fresh_scaffold_says_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_HOME", str(tmp_path))
    scaffold_exercise(tmp_path, "layer_norm", "numpy")
    rows = run_selfcheck([get_exercise("layer_norm", tmp_path)], sandbox="process", seed=3)
    by_kind = {r.kind: r for r in rows}
    assert by_kind["stub"].ok  # the stub scores 0, graded, from the first minute
    assert not by_kind["reference"].ok and "NotImplementedError" in by_kind["reference"].note
    missing = [r for r in rows if r.kind == "missing"]
    assert len(missing) == 2 and not any(r.ok for r in missing)
    assert {Path(r.file).name for r in missing} == {"correct_*.py", "bug_*.py"}
