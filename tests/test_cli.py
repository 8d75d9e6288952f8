"""The CLI through click's CliRunner: help for every command, exit codes, files written."""
import json

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.grading.scorecard import validate


def commands(group, prefix=()):
    for name, cmd in group.commands.items():
        yield (*prefix, name)
        if hasattr(cmd, "commands"):
            yield from commands(cmd, (*prefix, name))


@pytest.mark.parametrize("argv", [(), *commands(main)])
def test_every_command_has_help(argv):
    result = CliRunner().invoke(main, [*argv, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


def test_list_names_the_exercises():
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 0
    assert "softmax" in result.output and "attention_scores" in result.output


def test_show_prints_the_spec():
    result = CliRunner().invoke(main, ["show", "softmax"])
    assert result.exit_code == 0 and "# softmax" in result.output


def test_unknown_exercise_is_a_usage_error_listing_known_ids():
    result = CliRunner().invoke(main, ["show", "softmaxx"])
    assert result.exit_code == 2
    assert "unknown exercise 'softmaxx'" in result.output and "softmax" in result.output


def test_init_copies_the_stub_and_refuses_to_overwrite(tmp_path):
    runner = CliRunner()
    first = runner.invoke(main, ["init", "softmax", str(tmp_path)])
    assert first.exit_code == 0
    assert "raise NotImplementedError" in (tmp_path / "softmax.py").read_text()
    second = runner.invoke(main, ["init", "softmax", str(tmp_path)])
    assert second.exit_code == 2 and "already exists" in second.output


def test_submit_exit_codes_and_scorecard(tmp_path, request):
    root = request.config.rootpath
    runner = CliRunner()
    out = tmp_path / "card.json"
    ok = runner.invoke(main, ["submit", "softmax", str(root / "reference/softmax.py"), "--sandbox", "process",
                              "--seed", "3", "--out", str(out), "--json", "-q"])
    assert ok.exit_code == 0, ok.output
    doc = json.loads(out.read_text())
    validate(doc)
    assert doc["score"] == doc["max_score"] and doc["view"] == "candidate" and doc["seed"] is None
    assert json.loads(ok.stdout)["score"] == doc["score"]
    bad = runner.invoke(main, ["submit", "softmax", str(root / "submissions/samples/softmax/bug_naive_exp.py"),
                               "--sandbox", "process", "--out", str(out), "-q"])
    assert bad.exit_code == 1
    assert "large_logits" in bad.output and "FAIL" in bad.output
    missing = runner.invoke(main, ["submit", "softmax", str(tmp_path / "nope.py")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_submit_csv_export_names_the_scorecard_it_wrote(tmp_path, request):
    import csv  # noqa: PLC0415

    root = request.config.rootpath
    out, export = tmp_path / "card.json", tmp_path / "results.csv"
    result = CliRunner().invoke(main, ["submit", "softmax", str(root / "submissions/samples/softmax/bug_naive_exp.py"),
                                       "--sandbox", "process", "--seed", "3", "--out", str(out), "-q",
                                       "--format", "csv", "--export", str(export)])
    assert result.exit_code == 1, result.output
    (row,) = list(csv.DictReader(export.open(encoding="utf-8")))
    assert row["scorecard"] == str(out) and out.exists()
    assert row["status"] == "graded" and "large_logits" in row["failed_checks"].split(";")
    assert float(row["score"]) == json.loads(out.read_text())["score"] < float(row["max_score"])


def test_submit_infrastructure_error_exits_3(tmp_path, request, monkeypatch):
    import grader.grading.grade as grading

    def broken(*_a, **_k):
        raise RuntimeError("injected grader fault")

    monkeypatch.setattr(grading, "build_plan", broken)
    root = request.config.rootpath
    result = CliRunner().invoke(main, ["submit", "softmax", str(root / "reference/softmax.py"), "--sandbox",
                                       "process", "--out", str(tmp_path / "c.json"), "-q"])
    assert result.exit_code == 3
    assert "not the candidate's fault" in result.output


def test_list_aligns_titles_past_the_longest_id():
    lines = [ln for ln in CliRunner().invoke(main, ["list"]).output.splitlines() if ln.strip()]
    starts = {ln.index(ln.split()[1], len(ln.split()[0])) for ln in lines}
    assert len(starts) == 1, lines  # every title starts in the same column (positional_encoding too)


def test_show_in_the_other_track_says_so_first():
    """A track without its own statement (mha's numpy track has no spec_numpy.md) shows the default
    text under a note; softmax's torch track has spec_torch.md and needs none."""
    out = CliRunner().invoke(main, ["show", "mha", "--track", "numpy"]).output
    assert "You are on the numpy track" in out.splitlines()[2]
    assert "You are on" not in CliRunner().invoke(main, ["show", "mha"]).output
    assert "You are on" not in CliRunner().invoke(main, ["show", "softmax", "--track", "torch"]).output


def test_submit_notes_a_file_written_for_the_other_track(tmp_path):
    src = tmp_path / "sm.py"
    src.write_text("import torch\n\n\ndef softmax(x, axis=-1):\n    return x\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["submit", "softmax", str(src), "--out", str(tmp_path / "c.json")])
    # graded in the default (NumPy) track, where torch is forbidden; the note names the fix
    assert result.exit_code == 1
    assert "imports torch and is graded in the numpy track; for the torch track use --track torch" in result.output
