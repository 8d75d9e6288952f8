"""The whole run's wall-clock deadline, with an allowance for a loaded host.

A run has a wall-clock limit (``Limits.wall_seconds``) and a CPU budget (``Limits.cpu_seconds``,
the ``RLIMIT_CPU`` of the process backend). On an idle host the wall clock and the CPU time of a
computing run advance together, and the wall-clock limit is what stops a run that waits (sleeps,
blocks on I/O) instead of computing. On a loaded host they do not: with eight graders sharing two
cores a run that computes all the time gets an eighth of a core, and a correct solution that needs
10 s of CPU reaches 60 s of wall clock after 8 s of CPU. Charging that as a timeout made the same
file score differently by load (issue 15: "the same file at the same seed gets the same score under
any load"; the steps' own limits already count CPU time, see ``grader.run.runner``).

So when the wall-clock limit passes while the run still has CPU budget left, was computing (it got
at least ``MIN_CPU_SHARE`` of a core since the last look, so it is starved rather than waiting) *and*
has not yet had ``wall_seconds`` of CPU (what an idle host would have given it within the limit),
the deadline moves on by another window, up to ``BACKSTOP_FACTOR`` times the limit. A run that waits
gets no allowance; a run that spends its CPU budget is stopped by the budget; a run that computes at
full speed (a spinning loop on an idle host) is stopped at the plain limit, as it would be without
the allowance, and a starved one once it has had the same CPU time, so the outcome is the load's
no more than the backstop allows.
"""

from __future__ import annotations

import time
from typing import Callable

#: The wall clock never runs past this many times ``wall_seconds`` (the backstop).
BACKSTOP_FACTOR = 4.0
#: Share of one core a run must have had since the last look to count as computing (starved by load).
MIN_CPU_SHARE = 0.05
#: Each allowance is this fraction of ``wall_seconds``.
WINDOW_FRACTION = 0.25


def wait_for_run(finished: Callable[[float], bool], cpu_seconds: Callable[[], float | None],
                 wall_seconds: float, cpu_budget: float, start: float,
                 clock: Callable[[], float] = time.monotonic) -> bool:
    """Wait for a run to finish; return True when it must be stopped as timed out.

    Args:
        finished: ``finished(timeout)`` waits up to ``timeout`` seconds and says whether the run ended.
        cpu_seconds: the CPU seconds the run has used so far (read from outside it), or None when
            they cannot be read (then no allowance is given: the plain wall-clock limit holds).
        wall_seconds: the run's wall-clock limit (seconds).
        cpu_budget: the run's CPU budget (seconds); a run that used it gets no allowance, nor one
            that used ``wall_seconds`` of CPU (it was not starved of anything an idle host gives).
        start: when the run started, on ``clock`` (seconds).
        clock: a monotonic clock (seconds); injected by tests.

    Returns:
        False when the run ended in time; True when the deadline (with any allowance) passed first.
    """
    deadline = start + wall_seconds
    backstop = start + wall_seconds * BACKSTOP_FACTOR
    window = max(1.0, wall_seconds * WINDOW_FRACTION)
    last_t, last_cpu = start, 0.0
    while True:
        left = deadline - clock()
        if left > 0:
            if finished(left):
                return False
            continue
        now = clock()
        used = cpu_seconds()
        if used is None or used >= cpu_budget or used >= wall_seconds or now >= backstop:
            return True
        share = (used - last_cpu) / max(now - last_t, 1e-9)
        if share < MIN_CPU_SHARE:
            return True
        last_t, last_cpu = now, used
        deadline = min(backstop, now + window)
