"""The run's wall-clock deadline with its allowance for a loaded host (grader/sandbox/deadline.py),
driven by a fake clock: a run that computes slowly on a starved host is not stopped while it has CPU
budget left, one that waits is stopped at the plain limit, and nothing runs past the backstop."""

import pytest

from grader.sandbox.deadline import BACKSTOP_FACTOR, wait_for_run


class FakeRun:
    """A run that needs ``cpu_needed`` CPU seconds and gets ``share`` of a core (0: it sleeps)."""

    def __init__(self, cpu_needed: float, share: float):
        self.now, self.cpu_needed, self.share = 0.0, cpu_needed, share

    def cpu(self) -> float:
        return min(self.cpu_needed, self.now * self.share)

    def finished(self, timeout: float) -> bool:
        if self.share > 0:
            done_at = self.cpu_needed / self.share
            if done_at <= self.now + timeout:
                self.now = max(self.now, done_at)
                return True
        self.now += timeout
        return False

    def clock(self) -> float:
        return self.now


def test_a_run_starved_to_an_eighth_of_a_core_finishes_when_its_cpu_fits_the_budget():
    run = FakeRun(cpu_needed=10.0, share=1 / 8)       # 80 s of wall clock for 10 s of CPU
    assert wait_for_run(run.finished, run.cpu, 60.0, 60.0, 0.0, clock=run.clock) is False
    assert run.now == pytest.approx(80.0)


def test_the_same_run_on_an_idle_host_finishes_at_its_own_pace():
    run = FakeRun(cpu_needed=10.0, share=1.0)
    assert wait_for_run(run.finished, run.cpu, 60.0, 60.0, 0.0, clock=run.clock) is False
    assert run.now == pytest.approx(10.0)


def test_a_run_that_sleeps_is_stopped_at_the_plain_limit():
    run = FakeRun(cpu_needed=1.0, share=0.0)
    assert wait_for_run(run.finished, run.cpu, 60.0, 60.0, 0.0, clock=run.clock) is True
    assert run.now == pytest.approx(60.0)


def test_a_starved_run_that_never_ends_stops_at_the_backstop():
    run = FakeRun(cpu_needed=1e9, share=0.1)           # 0.1 core: 24 CPU s by the backstop, under budget
    assert wait_for_run(run.finished, run.cpu, 60.0, 60.0, 0.0, clock=run.clock) is True
    assert run.now == pytest.approx(60.0 * BACKSTOP_FACTOR)


def test_a_run_that_spent_its_cpu_budget_gets_no_allowance():
    run = FakeRun(cpu_needed=1e9, share=1.0)
    assert wait_for_run(run.finished, run.cpu, 60.0, 30.0, 0.0, clock=run.clock) is True
    assert run.now == pytest.approx(60.0)


def test_unreadable_cpu_time_keeps_the_plain_limit():
    run = FakeRun(cpu_needed=10.0, share=1 / 8)
    assert wait_for_run(run.finished, lambda: None, 60.0, 60.0, 0.0, clock=run.clock) is True
    assert run.now == pytest.approx(60.0)


def test_a_run_computing_at_full_speed_is_stopped_at_the_plain_limit():
    """A spinning loop on an idle host: it had wall_seconds of CPU by the limit, so no allowance (the
    hostile corpus' cpu_spin was given 4x its wall limit per run before)."""
    run = FakeRun(cpu_needed=1e9, share=1.0)
    assert wait_for_run(run.finished, run.cpu, 5.0, 600.0, 0.0, clock=run.clock) is True
    assert run.now == pytest.approx(5.0)


def test_a_starved_spinner_is_stopped_once_it_had_the_cpu_of_the_plain_limit():
    run = FakeRun(cpu_needed=1e9, share=0.5)           # half a core: 5 s of CPU after 10 s of wall
    assert wait_for_run(run.finished, run.cpu, 5.0, 600.0, 0.0, clock=run.clock) is True
    assert run.now == pytest.approx(10.0)
    assert run.cpu() == pytest.approx(5.0)
