"""What the host observes of a sandboxed run from outside it: the CPU time of the run's processes.

Probe counts (FLOPs, bytes) are produced inside the submission's own process, so a submission can
patch the instruments or forge step frames. The CPU time the kernel charges to the sandbox is out of
its reach: the host samples it each time bytes of the result stream arrive (a ``CpuTimeline``), and
after decoding gives each step the CPU seconds spent between the previous frame's arrival and its
own (``StepResult.observed_cpu_seconds``). ``grader.judge.forgery`` compares the growth of that time
with the growth of the counts. Sources:

* process backend: ``utime + stime + cutime + cstime`` of the runner and of every live descendant,
  from ``/proc/<pid>/stat`` (``proc(5)``, fields 14-17, in clock ticks of ``SC_CLK_TCK``);
* docker backend: the container's cgroup CPU usage, cgroup v1 ``cpuacct/docker/<id>/cpuacct.usage``
  (nanoseconds) or cgroup v2 ``.../docker-<id>.scope/cpu.stat`` or ``docker/<id>/cpu.stat``
  ``usage_usec`` (microseconds), for the ``cgroupfs`` and ``systemd`` drivers.

When no source can be read, nothing is attached and no cross-check is made (never a false flag).
"""

from __future__ import annotations

import os
import threading
from typing import Callable

from grader.run.channel import RunResults

CGROUP_ROOT = "/sys/fs/cgroup"
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_stat_seconds(pid: int) -> tuple[float, list[int]]:
    """CPU seconds charged to ``pid`` and its reaped children, and its live children's pids.

    Raises:
        OSError: the process is gone or unreadable.
    """
    with open(f"/proc/{pid}/stat", "rb") as fh:
        stat = fh.read().decode("ascii", "replace")
    fields = stat[stat.rindex(")") + 2:].split()  # the name (field 2) may hold spaces and parens
    utime, stime, cutime, cstime = (int(v) for v in fields[11:15])  # fields 14-17 of proc(5)
    children: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                children.extend(int(c) for c in fh.read().split())
    except OSError:
        pass
    return (utime + stime + cutime + cstime) / _TICK, children


def process_tree_cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) of ``pid`` and every descendant, live or reaped; None if ``pid``
    cannot be read (it exited). Resolution: one clock tick (usually 10 ms)."""
    total, stack, seen = 0.0, [pid], set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            seconds, children = _proc_stat_seconds(current)
        except (OSError, ValueError, IndexError):
            if current == pid:
                return None
            continue
        total += seconds
        stack.extend(children)
    return total


def cgroup_cpu_paths(container_id: str, root: str = CGROUP_ROOT) -> list[str]:
    """Where the container's cgroup CPU usage may be: cgroup v1 ``cpuacct.usage`` (ns), then cgroup v2
    ``cpu.stat`` (``usage_usec``, µs), under the ``cgroupfs`` (``docker/<id>``) and ``systemd``
    (``system.slice/docker-<id>.scope``) layouts."""
    scope = f"docker-{container_id}.scope"
    return ([os.path.join(root, sub, "docker", container_id, "cpuacct.usage")
             for sub in ("cpuacct", "cpu,cpuacct", "cpuacct,cpu")]
            + [os.path.join(root, sub, "system.slice", scope, "cpuacct.usage") for sub in ("cpuacct", "cpu,cpuacct")]
            + [os.path.join(root, "system.slice", scope, "cpu.stat"), os.path.join(root, "docker", container_id, "cpu.stat")])


def read_cgroup_cpu_seconds(path: str) -> float | None:
    """CPU seconds from one cgroup file (``cpuacct.usage``: ns; ``cpu.stat``: ``usage_usec``); None
    if it cannot be read (the cgroup is gone)."""
    try:
        with open(path) as fh:
            if path.endswith("cpuacct.usage"):
                return int(fh.read().strip()) / 1e9
            for line in fh:
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
    except (OSError, ValueError):
        return None
    return None


def cgroup_cpu_source(container_id: str, root: str = CGROUP_ROOT) -> Callable[[], float | None]:
    """A reader of the container's CPU seconds from its cgroup. The path is looked up on each call
    until found (the cgroup exists only once the container has started); the reader returns None
    while no known path exists (another cgroup layout: no observation, no cross-check)."""
    found: list[str] = []

    def read() -> float | None:
        if not found:
            for path in cgroup_cpu_paths(container_id, root):
                if os.path.exists(path):
                    found.append(path)
                    break
            else:
                return None
        return read_cgroup_cpu_seconds(found[0])

    return read


class CpuTimeline:
    """Samples ``(bytes of the result stream received so far, CPU seconds of the sandbox)``.

    ``sample(total_bytes)`` is called by the reader thread right after each chunk of the result
    stream arrives; ``source`` returns the sandbox's CPU seconds (None: unreadable, not recorded).
    """

    def __init__(self, source: Callable[[], float | None] | None):
        self.source = source
        self.samples: list[tuple[int, float]] = []
        self._lock = threading.Lock()

    def sample(self, total_bytes: int) -> None:
        """Record the CPU seconds now against ``total_bytes`` received (never raises)."""
        if self.source is None:
            return
        try:
            seconds = self.source()
        except Exception:  # noqa: BLE001 - an observation must never break a run
            return
        if seconds is not None:
            with self._lock:
                self.samples.append((int(total_bytes), float(seconds)))

    def at(self, offset: int) -> float | None:
        """CPU seconds sampled when the stream first held ``offset`` bytes, or None if never sampled."""
        with self._lock:
            for total, seconds in self.samples:
                if total >= offset:
                    return seconds
        return None


def attach_observed_cpu(results: RunResults, timeline: CpuTimeline) -> None:
    """Set each decoded step's ``observed_cpu_seconds``: the sandbox's CPU seconds between the arrival
    of the frame before it and of its own frame (host-side; nothing the sandbox sent is read but the
    frame boundaries). Steps whose frames were not both sampled keep None."""
    previous = None
    for kind, step_id, end in results.frame_ends:
        now = timeline.at(end)
        if kind == "step" and step_id in results.steps and now is not None and previous is not None:
            results.steps[step_id].observed_cpu_seconds = max(0.0, now - previous)
        previous = now
