"""grade batch: layouts, summary.csv, resume, --force, a broken submission, Ctrl-C."""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cohort import batch as batch_mod
from grader.cohort.batch import batch, discover
from grader.cli import main
from grader.grading.exercise import project_root
from grader.grading.scorecard import read_scorecard
from mutant_helpers import mutant_source

SAMPLES = project_root() / "submissions" / "samples"
CANDIDATE_FIRST = {  # candidate -> {exercise: sample}
    "alice": {"softmax": "softmax/correct_logsumexp.py", "attention_scores": "mistake:unscaled"},  # a bank mutant
    "bob": {"softmax": "softmax/bug_ignores_axis.py", "attention_scores": "attention_scores/correct_einsum.py"},
    "carol": {"softmax": None},  # a syntax error
}
CRASHER = "def softmax(x, axis=-1:\n    return x\n"  # does not compile


def _make_candidate_first(root: Path) -> Path:
    for cand, files in CANDIDATE_FIRST.items():
        (root / cand).mkdir(parents=True)
        for ex, sample in files.items():
            target = root / cand / f"{ex}.py"
            if sample and sample.startswith("mistake:"):
                target.write_text(mutant_source(ex, sample[8:]), encoding="utf-8")
            elif sample:
                shutil.copyfile(SAMPLES / sample, target)
            else:
                target.write_text(CRASHER)
    (root / "bob" / "notes.py").write_text("x = 1\n")  # not an exercise: ignored with a reason
    return root


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = _make_candidate_first(tmp_path_factory.mktemp("cohort"))
    out = tmp_path_factory.mktemp("out")
    result = batch(root, out, jobs=2, sandbox="process", seed=11, formats=("junit", "gradescope", "json"))
    return root, out, result


def test_discover_layouts(tmp_path):
    root = _make_candidate_first(tmp_path / "a")
    found = discover(root)
    assert {(i.candidate, i.exercise) for i in found.items} == {
        ("alice", "softmax"), ("alice", "attention_scores"), ("bob", "softmax"), ("bob", "attention_scores"),
        ("carol", "softmax")}
    assert [p.name for p, _why in found.ignored] == ["notes.py"]
    by_exercise = tmp_path / "b"
    (by_exercise / "softmax").mkdir(parents=True)
    shutil.copyfile(SAMPLES / "softmax/bug_inplace.py", by_exercise / "softmax" / "dave.py")
    assert [(i.candidate, i.exercise) for i in discover(by_exercise).items] == [("dave", "softmax")]
    flat = by_exercise / "softmax"
    assert [(i.candidate, i.exercise) for i in discover(flat, exercise="softmax").items] == [("dave", "softmax")]


def test_batch_writes_a_scorecard_per_submission_and_a_matching_summary(graded):
    root, out, result = graded
    assert not result.interrupted and len(result.outcomes) == 5
    with open(out / "summary.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 5
    for row in rows:
        card = read_scorecard(out / row["scorecard"])  # validates against the schema
        assert row["exercise"] == card.exercise["id"]
        assert row["status"] == card.status
        assert float(row["score"]) == card.score and float(row["max_score"]) == card.max_score
        assert row["failed_checks"] == ";".join(c.id for c in card.checks if c.verdict != "passed")
        assert card.submission["sha256"] == batch_mod.sha256_file(root / row["candidate"] / f"{row['exercise']}.py")
        assert card.seed == 11 and card.view == "interviewer"
    by_key = {(r["candidate"], r["exercise"]): r for r in rows}
    assert by_key[("bob", "attention_scores")]["failed_checks"] == ""
    assert "scaling" in by_key[("alice", "attention_scores")]["failed_checks"]
    assert by_key[("carol", "softmax")]["status"] == "compile_error"  # and the batch went on
    assert (out / "junit.xml").is_file() and (out / "scorecards.json").is_file()
    assert (out / "gradescope" / "softmax" / "alice.json").is_file()


def test_resume_skips_current_scorecards_and_force_regrades(graded, tmp_path):
    root, out, _ = graded
    copy_root, copy_out = tmp_path / "cohort", tmp_path / "out"
    shutil.copytree(root, copy_root)
    shutil.copytree(out, copy_out)
    again = batch(copy_root, copy_out, jobs=1, sandbox="process", seed=11)
    assert all(o.skipped for o in again.outcomes) and len(again.outcomes) == 5
    # a changed file is graded again; the others stay skipped
    (copy_root / "bob" / "softmax.py").write_bytes((SAMPLES / "softmax/correct_logsumexp.py").read_bytes())
    mtime = (copy_out / "softmax" / "alice.json").stat().st_mtime_ns
    changed = batch(copy_root, copy_out, jobs=1, sandbox="process", seed=11)
    regraded = {(o.item.candidate, o.item.exercise) for o in changed.outcomes if not o.skipped}
    assert regraded == {("bob", "softmax")}
    assert read_scorecard(copy_out / "softmax" / "bob.json").all_passed
    assert (copy_out / "softmax" / "alice.json").stat().st_mtime_ns == mtime
    flat = tmp_path / "flat"
    flat.mkdir()
    shutil.copyfile(copy_root / "alice" / "softmax.py", flat / "alice.py")
    # the same bytes under the same candidate and exercise: current, whatever the folder layout
    assert [o.skipped for o in batch(flat, copy_out, exercise="softmax", jobs=1, sandbox="process").outcomes] == [True]
    forced = batch(flat, copy_out, exercise="softmax", jobs=1, sandbox="process", force=True)
    assert [o.skipped for o in forced.outcomes] == [False]


def test_a_grader_fault_on_one_submission_never_stops_the_batch(tmp_path, monkeypatch):
    import grader.grading.grade

    root = tmp_path / "softmax"
    root.mkdir()
    for name, sample in (("a_first", "correct_logsumexp"), ("b_broken", "bug_inplace"), ("c_last", "bug_inplace")):
        shutil.copyfile(SAMPLES / "softmax" / f"{sample}.py", root / f"{name}.py")
    real = grader.grading.grade.grade_submission

    def flaky(exercise, path, **kwargs):
        if Path(path).stem == "b_broken":
            raise RuntimeError("grader bug on purpose")
        return real(exercise, path, **kwargs)

    monkeypatch.setattr(grader.grading.grade, "grade_submission", flaky)
    result = batch(root, tmp_path / "out", exercise="softmax", jobs=1, sandbox="process", seed=3)
    status = {o.item.candidate: o.status for o in result.outcomes}
    assert status == {"a_first": "graded", "b_broken": "infrastructure_error", "c_last": "graded"}
    card = read_scorecard(tmp_path / "out" / "softmax" / "b_broken.json")
    assert "grader bug on purpose" in card.status_message and card.score == 0
    assert all(c.verdict == "skipped" for c in card.checks) and len(card.checks) > 0
    # a grader fault is retried on the next run, not skipped as current
    monkeypatch.setattr(grader.grading.grade, "grade_submission", real)
    again = batch(root, tmp_path / "out", exercise="softmax", jobs=1, sandbox="process", seed=3)
    assert {o.item.candidate for o in again.outcomes if not o.skipped} == {"b_broken"}


def test_cli_batch_and_help(graded):
    root, out, _ = graded
    runner = CliRunner()
    assert runner.invoke(main, ["batch", "--help"]).exit_code == 0
    result = runner.invoke(main, ["batch", str(root), "--out", str(out), "--sandbox", "process", "-q"])
    assert result.exit_code == 0, result.output
    assert "5 submissions (0 graded now, 5 already graded)" in result.output


def _sandbox_processes(marker: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd:
            found.append(f"{proc.name}: {cmd}")
    return found


@pytest.mark.slow
def test_ctrl_c_keeps_finished_scorecards_and_leaves_no_sandbox(tmp_path):
    root = tmp_path / "cohort"
    root.mkdir()
    shutil.copyfile(SAMPLES / "softmax/correct_logsumexp.py", root / "fast.py")
    (root / "slow1.py").write_text("import time\ntime.sleep(120)\n")
    (root / "slow2.py").write_text("import time\ntime.sleep(120)\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "grader.cli", "batch", str(root), "--exercise", "softmax",
                             "--out", str(out), "--sandbox", "process", "--jobs", "2", "-q"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (out / "softmax" / "fast.json").exists():
        time.sleep(0.2)
    assert (out / "softmax" / "fast.json").exists(), "the fast submission was never graded"
    while time.monotonic() < deadline and not _sandbox_processes(str(scratch)):
        time.sleep(0.2)  # a slow submission is running in its sandbox
    assert _sandbox_processes(str(scratch))
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, output.decode()
    assert read_scorecard(out / "softmax" / "fast.json").all_passed
    assert not (out / "softmax" / "slow1.json").exists() and not (out / "softmax" / "slow2.json").exists()
    time.sleep(0.5)
    assert _sandbox_processes(str(scratch)) == []
    assert not [p for p in scratch.iterdir() if p.name.startswith("grade-process-")]


def test_a_stopped_batch_removes_the_warm_folders_of_workers_that_are_gone(tmp_path, monkeypatch):
    """A worker killed past its grace period (a loaded machine) cannot discard its warm pool; its
    runners exit on end of file but their folders stayed (CI: two grade-process-warm-<pid>-* folders
    after Ctrl-C). The parent sweeps, once its workers are reaped, the warm folders of both backends
    whose owning process is gone, and none of a live one."""
    import tempfile

    from grader.cohort.executors import _sweep_dead_workers_folders
    from grader.sandbox.docker import WARM_PREFIX as DOCKER_WARM
    from grader.sandbox.process import WARM_PREFIX as PROCESS_WARM

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # reaped: its pid is free
    dead = [tmp_path / f"{PROCESS_WARM}{gone.pid}-abc", tmp_path / f"{DOCKER_WARM}{gone.pid}-def"]
    live = [tmp_path / f"{PROCESS_WARM}{os.getpid()}-ghi", tmp_path / "grade-process-1-other"]
    for folder in dead + live:
        (folder / "input").mkdir(parents=True)
    removed = _sweep_dead_workers_folders()
    assert sorted(removed) == sorted(str(f) for f in dead)
    assert [f.exists() for f in dead + live] == [False, False, True, True]


def test_a_warm_batch_grades_as_a_cold_one(tmp_path):
    """`grade batch --warm`: each submission after the first takes a sandbox the pool started ahead
    (one per submission), and its scorecard says what the cold run's says: status, score, every
    check's verdict and points, and the same sandbox backend, isolation and limits."""
    from grader.cohort.executors import LocalExecutor  # noqa: PLC0415
    from grader.sandbox import pool as pool_mod  # noqa: PLC0415

    root = tmp_path / "cohort"
    root.mkdir()
    names = ["correct_logsumexp", "bug_ignores_axis", "bug_naive_exp", "bug_returns_float64"]
    for name in names:
        shutil.copyfile(SAMPLES / "softmax" / f"{name}.py", root / f"{name}.py")
    batch(root, tmp_path / "cold", exercise="softmax", jobs=1, sandbox="process", seed=5)

    def ready_for_next(_outcome):  # deterministic: the next submission finds its sandbox started
        pool, deadline = pool_mod.installed(), time.monotonic() + 120
        while pool is not None and pool.waiting() == 0 and time.monotonic() < deadline:
            time.sleep(0.05)

    executor = LocalExecutor(1, warm={"numpy": 1}, sandbox="process")
    batch(root, tmp_path / "warm", exercise="softmax", sandbox="process", seed=5, executor=executor,
          on_done=ready_for_next)
    # the first grading ran cold; each later one took its public part's sandbox from the pool, and its
    # hidden part's too when one was waiting (issue 20: the hidden cases run in a fresh sandbox)
    assert executor.pool is not None and len(names) - 1 <= executor.pool.served <= 2 * len(names) - 1
    assert executor.pool.closed and pool_mod.installed() is None  # nothing of the pool outlives the batch

    def essence(card):
        return (card.status, card.score, card.max_score, tuple((c.id, c.verdict, c.points) for c in card.checks),
                card.sandbox["backend"], card.sandbox["isolation"], card.sandbox["limits"])

    for name in names:
        cold = read_scorecard(tmp_path / "cold" / "softmax" / f"{name}.json")
        warm = read_scorecard(tmp_path / "warm" / "softmax" / f"{name}.json")
        assert essence(warm) == essence(cold), name
    assert read_scorecard(tmp_path / "warm" / "softmax" / "correct_logsumexp.json").all_passed
    assert not read_scorecard(tmp_path / "warm" / "softmax" / "bug_ignores_axis.json").all_passed


def test_batch_help_names_the_warm_pool():
    result = CliRunner().invoke(main, ["batch", "--help"])
    assert result.exit_code == 0 and "--warm INTEGER" in result.output and "--warm-torch" in result.output
