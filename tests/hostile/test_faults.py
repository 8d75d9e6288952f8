"""Fair fault attribution: faults of the grader (engine unreachable or gone mid-batch, image missing,
an unknown runtime, a runner that never starts, a check that raises) give ``infrastructure_error``
with a message for the operator and exit code 3 — never a zero charged to the candidate — while a
submission that kills its own process is the candidate's fault."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import grader.grading.grade as grading
from grader.judge import judges
from grader.cohort.batch import BatchItem, run_batch
from grader.cli import main
from grader.grading.exercise import get_exercise
from grader.grading.grade import grade_submission
from grader.sandbox.base import SandboxUnavailable
from grader.sandbox.docker import RUNTIME_ENV, DockerSandbox
from grader.sandbox.image import IMAGE_ENV
from grader.sandbox.process import ProcessSandbox
from grader.grading.scorecard import read_scorecard

ROOT = Path(__file__).resolve().parents[2]
CORRECT = ROOT / "submissions" / "samples" / "softmax" / "correct_logsumexp.py"
OS_EXIT = Path(__file__).resolve().parent / "cases" / "os_exit_at_import.py"


def _assert_not_charged(card, needle: str) -> None:
    assert card.status == "infrastructure_error", card.status_message
    assert needle in card.status_message
    assert card.score == 0 and {c.verdict for c in card.checks} == {"skipped"}
    assert all(c.message.startswith("Not graded") for c in card.checks)


def _submit(tmp_path, *args, env=None):
    return CliRunner().invoke(main, ["submit", "softmax", str(CORRECT), "-q", "--out", str(tmp_path / "card.json"),
                                     *args], env=env)


def test_unreachable_engine_is_an_infrastructure_error(monkeypatch, tmp_path):
    dead = f"unix://{tmp_path}/no-engine.sock"
    monkeypatch.setenv("DOCKER_HOST", dead)
    card = grade_submission(get_exercise("softmax"), CORRECT, sandbox="docker", seed=1)
    _assert_not_charged(card, "no Docker engine is reachable")
    result = _submit(tmp_path, "--sandbox", "docker", env={"DOCKER_HOST": dead})
    assert result.exit_code == 3, result.output
    assert read_scorecard(tmp_path / "card.json").status == "infrastructure_error"
    result = _submit(tmp_path, "--require-isolation", env={"DOCKER_HOST": dead})
    assert result.exit_code == 3, result.output


@pytest.mark.docker
def test_missing_image_is_an_infrastructure_error(monkeypatch, tmp_path):
    monkeypatch.setenv(IMAGE_ENV, "attention-grader-sandbox:does-not-exist")
    card = grade_submission(get_exercise("softmax"), CORRECT, sandbox="docker", seed=1)
    _assert_not_charged(card, "is not built")
    assert _submit(tmp_path, "--sandbox", "docker").exit_code == 3


@pytest.mark.docker
def test_unknown_runtime_is_an_infrastructure_error(monkeypatch, tmp_path):
    monkeypatch.setenv(RUNTIME_ENV, "no-such-runtime")
    card = grade_submission(get_exercise("softmax"), CORRECT, sandbox="docker", seed=1)
    _assert_not_charged(card, "no-such-runtime")
    assert _submit(tmp_path, "--sandbox", "docker").exit_code == 3


@pytest.mark.docker
def test_a_runtime_the_engine_refuses_at_create_is_an_infrastructure_error(docker_sandbox, monkeypatch):
    """Past the readiness check (the engine changed meanwhile): the create call fails."""
    broken = DockerSandbox(docker_sandbox.client, docker_sandbox.image, runtime="no-such-runtime")
    monkeypatch.setattr(grading, "select_sandbox", lambda *a, **k: (broken, "docker (runtime gone)"))
    card = grade_submission(get_exercise("softmax"), CORRECT, sandbox="docker", seed=1)
    _assert_not_charged(card, "could not create a container")


def test_a_runner_that_never_starts_is_the_graders_fault_but_os_exit_at_import_is_not(monkeypatch):
    broken = ProcessSandbox(python=shutil.which("false"))
    monkeypatch.setattr(grading, "select_sandbox", lambda *a, **k: (broken, "process (broken on purpose)"))
    card = grade_submission(get_exercise("softmax"), CORRECT, sandbox="process", seed=1)
    _assert_not_charged(card, "the runner reported nothing")
    monkeypatch.undo()
    card = grade_submission(get_exercise("softmax"), OS_EXIT, sandbox="process", seed=1)
    assert card.status == "crashed" and "while being imported" in card.status_message


def test_a_check_that_raises_is_an_infrastructure_error(monkeypatch, tmp_path):
    def broken(*_a, **_k):
        raise ZeroDivisionError("bug in a comparison")

    monkeypatch.setattr(judges, "compare_arrays", broken)
    card = grade_submission(get_exercise("softmax"), CORRECT, sandbox="process", seed=1)
    _assert_not_charged(card, "bug in a comparison")
    assert _submit(tmp_path, "--sandbox", "process").exit_code == 3


@pytest.mark.docker
def test_engine_gone_mid_batch_leaves_later_submissions_ungraded_and_a_rerun_grades_them(monkeypatch, tmp_path):
    items = [BatchItem(f"cand{i}", "softmax", CORRECT) for i in range(3)]
    real_run = DockerSandbox.run
    calls = []

    def engine_stops_after_one(self, job, limits):
        calls.append(1)
        if len(calls) > 2:  # one grading: its public part, then its hidden part (issue 20)
            raise SandboxUnavailable("the Docker engine is not answering: simulated stop")
        return real_run(self, job, limits)

    real_run_warm = DockerSandbox.run_warm

    def warm_stops_after_one(self, warm, job):  # the hidden part runs in a container started ahead
        calls.append(1)
        if len(calls) > 2:
            warm.discard()
            raise SandboxUnavailable("the Docker engine is not answering: simulated stop")
        return real_run_warm(self, warm, job)

    monkeypatch.setattr(DockerSandbox, "run", engine_stops_after_one)
    monkeypatch.setattr(DockerSandbox, "run_warm", warm_stops_after_one)
    outcomes, interrupted = run_batch(items, tmp_path / "out", jobs=1, sandbox="docker", seed=3)
    assert not interrupted
    by = {o.item.candidate: o for o in outcomes}
    assert by["cand0"].status == "graded" and by["cand0"].all_passed
    for cand in ("cand1", "cand2"):
        assert by[cand].status == "infrastructure_error" and by[cand].score == 0
        card = read_scorecard(by[cand].scorecard)
        assert "simulated stop" in card.status_message

    monkeypatch.setattr(DockerSandbox, "run", real_run)
    monkeypatch.setattr(DockerSandbox, "run_warm", real_run_warm)
    outcomes, _ = run_batch(items, tmp_path / "out", jobs=1, sandbox="docker", seed=3)
    by = {o.item.candidate: o for o in outcomes}
    assert by["cand0"].skipped  # its scorecard was current
    assert all(by[c].status == "graded" and not by[c].skipped for c in ("cand1", "cand2"))


def test_batch_cli_exits_3_when_the_grader_failed_on_some(monkeypatch, tmp_path):
    folder = tmp_path / "softmax"
    folder.mkdir()
    shutil.copyfile(CORRECT, folder / "alice.py")
    dead = f"unix://{tmp_path}/no-engine.sock"
    result = CliRunner().invoke(main, ["batch", str(folder), "--exercise", "softmax", "--out", str(tmp_path / "out"),
                                       "-q", "--jobs", "1", "--sandbox", "docker", "--seed", "3"],
                                env={"DOCKER_HOST": dead})
    # the requested sandbox is checked once, before anything is graded: exit 3 with one line, and no
    # scorecard is written (nothing was graded, so nothing is charged or replaced)
    assert result.exit_code == 3, result.output
    assert "docker sandbox is not ready" in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "out" / "softmax" / "alice.json").exists()
