"""Every CLI verb against each class of bad input (issue #12): the exit code, one line on stderr,
no traceback, and no earlier output changed.

Classes: unknown id, missing file, folder, empty, binary, non-UTF-8, BOM, coding line, syntax error,
unwritable output, bad option values, non-scorecard JSON, empty cohort, seeds of a batch, grader
faults that must not replace a graded scorecard, and Ctrl-C (SIGINT to the process group, as a
terminal sends it).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.grading.exercise import project_root
from grader.grading.scorecard import read_scorecard

ROOT = project_root()
SOFTMAX = (ROOT / "reference" / "softmax.py").read_bytes()
WRONG = (ROOT / "submissions" / "samples" / "softmax" / "bug_naive_exp.py").read_bytes()
UNWRITABLE = "/proc/nope/out"  # procfs: no folder can be made there, even by root


def run(*argv: str):
    return CliRunner().invoke(main, [str(a) for a in argv])


def assert_one_line_error(result, code: int, *needles: str) -> str:
    """Exit ``code``, exactly one ``error:`` line on stderr holding every needle, no traceback."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    assert "Usage:" not in result.stderr  # no usage block around the one line
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


@pytest.fixture
def good_card(tmp_path):
    """A graded scorecard on disk (reference softmax, seed 5), and its bytes."""
    sub = tmp_path / "softmax.py"
    sub.write_bytes(SOFTMAX)
    out = tmp_path / "card.json"
    result = run("submit", "softmax", sub, "--sandbox", "process", "--seed", "5", "--out", out, "-q")
    assert result.exit_code == 0, result.output
    return sub, out, out.read_bytes()


# -- unknown ids ------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ("show", "nosuch"), ("init", "nosuch"), ("submit", "nosuch", "x.py"), ("selfcheck", "nosuch"),
    ("batch", ".", "--exercise", "nosuch"), ("review", "--exercise", "nosuch", "x.json"),
])
def test_unknown_exercise_id_is_one_line_naming_the_known_ids(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = assert_one_line_error(run(*argv), 2, "nosuch", "softmax", "attention_scores")
    assert "known" in line
    assert list(tmp_path.iterdir()) == []  # nothing written


# -- submission files: missing, folder, empty, binary, encodings, syntax ----------------------------

def test_missing_file_and_folder_are_usage_errors(tmp_path):
    assert_one_line_error(run("submit", "softmax", tmp_path / "nope.py"), 2, "does not exist")
    assert_one_line_error(run("submit", "softmax", tmp_path), 2, "is not a file")
    assert_one_line_error(run("review", tmp_path / "nope.json"), 2, "nope.json", "no such file")
    assert_one_line_error(run("report", tmp_path / "nope.json", "-o", tmp_path / "r.html"), 2, "nope.json")
    assert not (tmp_path / "r.html").exists()
    assert_one_line_error(run("batch", tmp_path / "nope"), 2, "nope")


def _submit_json(tmp_path, name: str, data: bytes, *extra: str):
    path = tmp_path / name
    path.write_bytes(data)
    out = tmp_path / f"{name}.json"
    result = run("submit", "softmax", path, "--sandbox", "process", "--seed", "1", "--out", out, "-q",
                 "--view", "interviewer", *extra)
    assert "Traceback" not in result.output
    return result, read_scorecard(out)


def _said_once(card, needle: str) -> None:
    """``needle`` is in the status message, and no check repeats the long reason."""
    assert needle in card.status_message, card.status_message
    for check in card.checks:
        assert check.message.startswith("Not run:") and "(see the status)" in check.message, check.message
        assert len(check.message) < 100


def test_empty_file_says_the_missing_function_once(tmp_path):
    result, card = _submit_json(tmp_path, "empty.py", b"")
    assert result.exit_code == 1 and card.status == "graded" and card.score == 0
    _said_once(card, "defines no function 'softmax'")


def test_binary_and_non_utf8_files_are_compile_errors_said_once(tmp_path):
    result, card = _submit_json(tmp_path, "binary.py", bytes(range(256)) * 4)
    assert result.exit_code == 1 and card.status == "compile_error"
    _said_once(card, "does not compile")
    # latin-1 bytes without a coding line: Python itself refuses to run this file
    result, card = _submit_json(tmp_path, "latin.py", b"# caf\xe9\n" + SOFTMAX)
    assert result.exit_code == 1 and card.status == "compile_error"
    _said_once(card, "not valid utf-8")
    # the independent authority: CPython refuses to run these bytes as a script (PEP 263)
    ran = subprocess.run([sys.executable, str(tmp_path / "latin.py")], capture_output=True, text=True)
    assert ran.returncode == 1 and "SyntaxError: Non-UTF-8 code" in ran.stderr


def test_syntax_error_is_said_once_at_the_status_with_its_line(tmp_path):
    result, card = _submit_json(tmp_path, "syntax.py", b"import numpy as np\ndef softmax(x, axis=-1)\n    return x\n")
    assert result.exit_code == 1 and card.status == "compile_error"
    _said_once(card, "line 2")


@pytest.mark.parametrize("prefix", [b"\xef\xbb\xbf", b"# -*- coding: latin-1 -*-\n# caf\xe9 cr\xe8me\n",
                                    b"#!/usr/bin/env python3\n# vim: set fileencoding=cp1252 :\n# \x80 euro\n"])
def test_files_that_python_runs_are_graded_in_full(tmp_path, prefix):
    source = prefix + SOFTMAX
    (tmp_path / "direct.py").write_bytes(source + b"\nimport numpy as np\nprint(softmax(np.zeros(4)).sum())\n")
    ran = subprocess.run([sys.executable, str(tmp_path / "direct.py")], capture_output=True, text=True)
    assert ran.returncode == 0 and ran.stdout.strip() == "1.0", ran.stderr  # CPython runs them: so must we
    result, card = _submit_json(tmp_path, "encoded.py", source)
    assert card.status == "graded" and card.score == card.max_score, card.status_message
    assert result.exit_code == 0


def test_os_exit_at_import_is_a_crash_not_a_compile_error(tmp_path):
    result, card = _submit_json(tmp_path, "exits.py", b"import os\nos._exit(0)\n")
    assert result.exit_code == 1 and card.status == "crashed"
    _said_once(card, "ended the process while being imported")


# -- outputs that cannot be written: exit 2 before anything is graded --------------------------------

def test_unwritable_outputs_are_refused_before_grading(tmp_path, good_card, monkeypatch):
    sub, out, before = good_card
    monkeypatch.chdir(tmp_path)
    assert_one_line_error(run("submit", "softmax", sub, "--out", f"{UNWRITABLE}/c.json"), 2, "scorecard")
    assert_one_line_error(run("submit", "softmax", sub, "--out", out, "--format", "csv", "--export",
                              f"{UNWRITABLE}/x.csv"), 2, "csv export")
    assert_one_line_error(run("submit", "softmax", sub, "--out", tmp_path), 2, "is a directory")
    assert out.read_bytes() == before  # the refused runs did not touch the scorecard
    assert_one_line_error(run("report", out, "-o", f"{UNWRITABLE}/r.html"), 2, "report")
    assert_one_line_error(run("init", "softmax", f"{UNWRITABLE}/foo"), 2, "cannot write")
    cohort = tmp_path / "cohort"
    cohort.mkdir()
    (cohort / "a.py").write_bytes(SOFTMAX)
    assert_one_line_error(run("batch", cohort, "--exercise", "softmax", "--out", UNWRITABLE), 2, "scorecards")


# -- option values: validated before any output is touched -----------------------------------------

@pytest.mark.parametrize("extra", [("--seed", "-5"), ("--seed", "abc"), ("--seed", str(2**40)),
                                   ("--sandbox", "vm"), ("--view", "all"), ("--format", "xml")])
def test_bad_submit_options_leave_the_scorecard_alone(good_card, extra):
    sub, out, before = good_card
    assert_one_line_error(run("submit", "softmax", sub, "--out", out, *extra), 2, extra[0])
    assert out.read_bytes() == before


@pytest.mark.parametrize("extra", [("--seed", "-1", "--force"), ("--jobs", "0"), ("--jobs", "x"),
                                   ("--format", "pdf"), ("--hidden-visibility", "never")])
def test_bad_batch_options_leave_the_output_folder_alone(tmp_path, extra):
    cohort = tmp_path / "cohort"
    cohort.mkdir()
    (cohort / "a.py").write_bytes(SOFTMAX)
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.csv").write_text("kept\n")
    assert_one_line_error(run("batch", cohort, "--exercise", "softmax", "--out", out, *extra), 2, extra[0])
    assert [p.name for p in out.iterdir()] == ["summary.csv"] and (out / "summary.csv").read_text() == "kept\n"


def test_a_grader_fault_never_replaces_a_graded_scorecard(good_card, monkeypatch):
    import grader.grading.grade as grading

    sub, out, before = good_card

    def broken(*_a, **_k):
        raise RuntimeError("injected grader fault")

    monkeypatch.setattr(grading, "build_plan", broken)
    result = run("submit", "softmax", sub, "--sandbox", "process", "--out", out, "-q")
    assert result.exit_code == 3 and "not the candidate's fault" in result.stderr
    assert "kept" in result.stderr
    assert out.read_bytes() == before


# -- review and report inputs -----------------------------------------------------------------------

@pytest.mark.parametrize("content", [b'{"a": 1}', b"[1, 2]", b"not json", bytes(range(256)), b""])
@pytest.mark.parametrize("verb", ["review", "report"])
def test_non_scorecards_are_one_line_naming_the_file(tmp_path, verb, content):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    argv = [verb, bad] + (["-o", tmp_path / "r.html"] if verb == "report" else [])
    assert_one_line_error(run(*argv), 2, str(bad))
    assert not (tmp_path / "r.html").exists()


def test_folders_and_the_json_export_are_accepted(tmp_path, good_card):
    sub, out, _ = good_card
    export = tmp_path / "export" / "all.json"
    wrong = tmp_path / "wrong.py"
    wrong.write_bytes(WRONG)
    result = run("submit", "softmax", wrong, "--sandbox", "process", "--seed", "5", "--out",
                 tmp_path / "cards" / "wrong.json", "--format", "json", "--export", export, "-q")
    assert result.exit_code == 1, result.output
    shutil.copyfile(out, tmp_path / "cards" / "good.json")
    (tmp_path / "cards" / "notes.json").write_text('{"not": "a scorecard"}')  # left out of a folder
    folder = run("review", tmp_path / "cards")
    assert folder.exit_code == 0, folder.output
    assert "good" in folder.stdout and "wrong" in folder.stdout
    exported = run("review", export)  # one submission: the export is that scorecard
    assert exported.exit_code == 0 and "all" in exported.stdout, exported.output
    listed = tmp_path / "export" / "scorecards.json"  # what `grade batch --format json` writes: a list
    listed.write_text(json.dumps([json.loads(out.read_text()), json.loads(export.read_text())]))
    both = run("review", listed)
    assert both.exit_code == 0, both.output
    assert "softmax" in both.stdout and "wrong" in both.stdout and len(both.stdout.splitlines()) < 20
    report = run("report", tmp_path / "cards", listed, "-o", tmp_path / "r.html", "--title", "Round 3")
    assert report.exit_code == 0, report.output
    assert "<title>Round 3" in (tmp_path / "r.html").read_text()
    assert_one_line_error(run("review", out, "--diff"), 2, "exactly two")


def test_an_empty_folder_is_not_a_review(tmp_path):
    (tmp_path / "empty").mkdir()
    assert_one_line_error(run("review", tmp_path / "empty"), 2, "no scorecard")


# -- batch: empty cohorts, skipped files, seeds ---------------------------------------------------

def test_empty_cohort_exits_2_lists_every_skipped_file_and_clobbers_nothing(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.csv").write_text("candidate,score\nalice,16\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_one_line_error(run("batch", empty, "--out", out), 2, "nothing to grade")
    misnamed = tmp_path / "misnamed"
    (misnamed / "alice").mkdir(parents=True)
    (misnamed / "alice" / "softmax.txt").write_text("def softmax(x): ...\n")
    (misnamed / "alice" / "sofmax.py").write_text("def softmax(x): ...\n")
    result = run("batch", misnamed, "--out", out)
    assert_one_line_error(result, 2, "nothing to grade", "2 files ignored")
    assert "softmax.txt: not a Python file" in result.stderr
    assert "sofmax.py: no exercise is named 'sofmax'" in result.stderr
    assert (out / "summary.csv").read_text() == "candidate,score\nalice,16\n"
    assert sorted(p.name for p in out.iterdir()) == ["summary.csv"]


def test_batch_records_its_seed_reuses_it_and_refuses_another(tmp_path):
    cohort = tmp_path / "cohort"
    cohort.mkdir()
    (cohort / "a.py").write_bytes(SOFTMAX)
    out = tmp_path / "out"
    first = run("batch", cohort, "--exercise", "softmax", "--out", out, "--sandbox", "process", "-q", "-j", "1")
    assert first.exit_code == 0, first.output
    seed = json.loads((out / "batch.json").read_text())["seed"]
    assert read_scorecard(out / "softmax" / "a.json").seed == seed
    assert "sandbox: process (requested)" in first.stderr  # said once, at the top
    (cohort / "b.py").write_bytes(WRONG)
    resumed = run("batch", cohort, "--exercise", "softmax", "--out", out, "--sandbox", "process", "-q", "-j", "1")
    assert resumed.exit_code == 0, resumed.output
    assert read_scorecard(out / "softmax" / "b.json").seed == seed  # the rest at the recorded seed
    summary = (out / "summary.csv").read_bytes()
    other = str((seed + 1) % 2**31)
    refused = run("batch", cohort, "--exercise", "softmax", "--out", out, "--sandbox", "process", "--seed", other)
    assert_one_line_error(refused, 2, f"--seed {seed}", "--force")
    assert (out / "summary.csv").read_bytes() == summary
    forced = run("batch", cohort, "--exercise", "softmax", "--out", out, "--sandbox", "process", "--seed", other,
                 "--force", "-q", "-j", "1")
    assert forced.exit_code == 0, forced.output
    assert json.loads((out / "batch.json").read_text())["seed"] == int(other)
    assert {read_scorecard(out / "softmax" / f"{n}.json").seed for n in "ab"} == {int(other)}


# -- Ctrl-C -----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_ctrl_c_to_the_process_group_exits_130_quickly_with_a_summary(tmp_path):
    root = tmp_path / "cohort"
    root.mkdir()
    (root / "a_fast.py").write_bytes(SOFTMAX)
    slow = [f"slow{i}" for i in range(1, 7)]  # queued ones too: their futures once raised in the pool's thread
    for name in slow:
        (root / f"{name}.py").write_text("import time\ntime.sleep(300)\n")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "grader.cli", "batch", str(root), "--exercise", "softmax",
                             "--out", str(out), "--sandbox", "process", "--jobs", "2", "-q", "--seed", "4"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not (out / "softmax" / "a_fast.json").exists():
        time.sleep(0.2)
    assert (out / "softmax" / "a_fast.json").exists(), "the fast submission was never graded"
    time.sleep(2)  # the slow ones are importing in their sandboxes
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
    sent = time.monotonic()
    stdout, stderr = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    assert proc.returncode == 130, (stdout + stderr).decode()
    assert took < 15, f"took {took:.1f} s to stop"
    text = stderr.decode()
    assert "Traceback" not in text and "Aborted" not in text and "Exception in thread" not in text, text
    assert "InvalidStateError" not in text
    rows = list(csv.DictReader((out / "summary.csv").open()))
    assert [r["candidate"] for r in rows] == ["a_fast"]
    assert not any((out / "softmax" / f"{n}.json").exists() for n in slow)
    for name in slow:  # resume: the finished card is kept, not graded again
        (root / f"{name}.py").unlink()
    again = subprocess.run([sys.executable, "-m", "grader.cli", "batch", str(root), "--exercise", "softmax",
                            "--out", str(out), "--sandbox", "process", "--jobs", "2", "-q"],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 graded now, 1 already graded" in again.stdout + again.stderr


@pytest.mark.parametrize("prefix", [b"\xef\xbb\xbf", b"# -*- coding: latin-1 -*-\n# \xe9\n"])
def test_a_bom_or_coding_line_does_not_hide_a_files_track(prefix):
    from grader.grading.exercise import get_exercise, track_for_source

    assert "torch" in get_exercise("softmax").tracks
    source = prefix + b"import torch\n\ndef softmax(x, dim=-1):\n    return torch.softmax(x, dim)\n"
    assert track_for_source("softmax", source) == "torch"  # what `import torch` in the file says


@pytest.mark.parametrize("argv", [("selfcheck", "softmax", "--seed", "-1"), ("selfcheck", "--sandbox", "vm"),
                                  ("show", "softmax", "--track", "jax"), ("list", "--bogus"),
                                  ("report", "x.json", "--title")])
def test_bad_option_values_of_the_other_verbs(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_one_line_error(run(*argv), 2)
    assert list(tmp_path.iterdir()) == []


def test_report_into_a_folder_that_does_not_exist_is_an_error_and_makes_no_folder(tmp_path, good_card):
    _, out, _ = good_card
    target = tmp_path / "nonexistent" / "dir" / "r.html"
    assert_one_line_error(run("report", out, "-o", target), 2, "does not exist")
    assert not (tmp_path / "nonexistent").exists()


def test_report_of_a_batch_folders_json_files_skips_batch_json_with_a_note(tmp_path, good_card):
    """`grade report DIR/*.json` on a batch folder names its batch.json too (the seed record)."""
    _, out, _ = good_card
    folder = tmp_path / "batch"
    folder.mkdir()
    shutil.copyfile(out, folder / "alice.json")
    (folder / "batch.json").write_text(json.dumps({"seed": 12345, "version": 1}))
    result = run("report", *sorted(folder.glob("*.json")), "-o", tmp_path / "r.html")
    assert result.exit_code == 0, result.output
    assert f"note: skipped {folder / 'batch.json'}" in result.stderr and "alice" in (tmp_path / "r.html").read_text()
    (folder / "other.json").write_text(json.dumps({"seed": 1}))  # any other non-scorecard is still an error
    assert_one_line_error(run("report", folder / "alice.json", folder / "other.json", "-o", tmp_path / "r.html"),
                          2, "other.json")


FAST_EXIT = """
import atexit, sys, threading, time
marker = sys.argv[1]
atexit.register(lambda: open(marker, "w").write("atexit ran"))
# a non-daemon thread: the interpreter's own finalisation would wait for it (10 minutes), os._exit does not
threading.Thread(target=time.sleep, args=(600,), daemon=False).start()
sys.argv = ["grade", *sys.argv[2:]]
from grader.entry import run  # the console script: the early sandbox, then grader.cli.run
run()
"""


@pytest.mark.parametrize("sample,code", [("correct_logsumexp.py", 0), ("bug_ignores_axis.py", 1)])
def test_the_console_script_exits_fast_with_its_code_its_output_and_its_atexit_handlers(tmp_path, sample, code):
    """``run`` (the ``grade`` console script) ends ``grade submit`` with os._exit after the scorecard:
    the exit code is submit's, the table reaches a pipe in full, and the atexit handlers (docker's
    container removals, warm pools) still ran, and the interpreter's finalisation did not (it would wait
    for the script's sleeping thread past the timeout); in-process callers keep sys.exit (CliRunner)."""
    marker, out = tmp_path / "marker", tmp_path / "card.json"
    proc = subprocess.run([sys.executable, "-c", FAST_EXIT, str(marker), "submit", "softmax",
                           str(ROOT / "submissions" / "samples" / "softmax" / sample), "--sandbox", "process",
                           "--out", str(out), "--seed", "2"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert proc.returncode == code, proc.stderr[-2000:]
    assert marker.read_text() == "atexit ran"
    card = read_scorecard(out)
    assert card.all_passed is (code == 0)
    assert f"score: {card.score:g} / {card.max_score:g}" in proc.stdout.replace("  ", " ") or \
        f"{card.score:g} / {card.max_score:g}" in proc.stdout, proc.stdout[-1500:]
    assert proc.stderr.rstrip().endswith(f"scorecard written to {out}")
