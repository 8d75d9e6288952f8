"""What the host observes of a sandboxed run from outside it: CPU time and peak memory.

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

Peak memory, the same way (``StepResult.observed_peak_bytes``): at each arrival the host reads a
high-water mark of the sandbox's memory, resets it to the current usage, and reads that usage
(``MemoryWatch.mark``). A step's observed peak is the highest mark read after the previous frame's
arrival up to its own, less the usage read at the previous frame's arrival. Sources:

* process backend: ``VmHWM`` (the high-water mark of the resident set) and ``VmRSS`` of the runner
  from ``/proc/<pid>/status``, reset by writing ``5`` to ``/proc/<pid>/clear_refs`` (``proc(5)``,
  Linux >= 4.0). The runner is the launcher's pid (``launch.py`` execs it) or, in a full box, the
  launcher's grandchild (pid 2 of the box's PID namespace, found by its ``NSpid``); children it may start
  are not included (``RLIMIT_NPROC`` limits them; a forger that hides work in a child is not seen);
* docker backend: the container's memory cgroup, v1 ``memory.max_usage_in_bytes`` (reset by writing
  ``0``) and ``memory.usage_in_bytes``; v2 ``memory.peak`` (reset by writing to the open file, its
  per-descriptor reset needs Linux >= 6.12) and ``memory.current``; same layouts as for CPU. cgroup
  v1 usage counts page cache too and is charged in batches of up to 256 kB per CPU.

Frame-synchronous observation (the handshake, ``runner.FrameSync`` and ``FrameSync`` here). A
measured step is observed only when the host read the memory exactly at the frame before it and
exactly at its own frame. Reading whenever bytes happened to arrive was not enough: a chunk of the
stream that ran past a frame merged two steps, and the runner, which exits right after its last
frames, was usually gone (``VmHWM`` of a zombie, or a removed cgroup, cannot be read) before the
host read the probe's largest size, so that size went unobserved in most gradings. So the host
follows the frame boundaries in the stream, and each time a chunk ends exactly at one it marks the
memory (and samples CPU time), then acknowledges the count of frames it has seen; the runner, around
every measured step, waits until all its frames are acknowledged: before the step starts and after
its frame. The step's window then runs from the host's mark at the previous frame to its mark at
the step's own frame, with the runner alive and blocked at both ends. The acknowledgement travels on
the runner's stdin: a pipe under the process backend, the attach socket's stdin under docker (cold
and warm containers alike; ``StdinOnce``). It costs one wake-up of each side per measured step
(tens of microseconds on an idle host); the host writes it non-blocking, so a runner that never
reads them cannot stall the host's reader. Alternatives rejected: sampling on a timer misses short
peaks (a temporary that lives between two samples), while a high-water mark reset at exact
boundaries misses nothing inside the window.

The runner is inside the sandbox: a submission can patch it to skip the handshake (or exit early,
or write frames in pieces, or feed the runner acknowledgements of its own). It gains nothing by it:
each acknowledgement carries a fresh random token, which a measured step's report must echo
(``sync_token``: the token acknowledged at the frame before the step, which a runner knows only once
the host has marked there), and a step whose window the host did not see exactly, or whose token is
not that one, while its memory source was readable is marked ``observed_peak_missed``, and a
probe whose largest sizes were missed this way carries an interviewer note
(``grader.judge.forgery.memory_unobserved_flag``).
What the observation still cannot see: memory that is reserved but never touched (``np.empty``,
``np.zeros``: pages are resident once written), and work done outside the step's window altogether
(at import, say, before any measured step): both only make the observed peak lower, which the
cross-check never flags.

When no source can be read, nothing is attached and no cross-check is made (never a false flag).
"""

from __future__ import annotations

import os
import threading
from typing import Callable

from grader.run.channel import RunResults
from grader.run.runner import ACK_BYTES, COUNT_BYTES, FRAME_MAGIC

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


class MemoryWatch:
    """A resettable high-water mark of a sandbox's memory, read from the host.

    Args:
        read_peak: bytes of the high-water mark since the last reset (None: unreadable).
        reset: sets the high-water mark to the current usage; returns False if it could not.
        read_current: bytes in use now (None: unreadable).
    """

    def __init__(self, read_peak: Callable[[], int | None], reset: Callable[[], bool],
                 read_current: Callable[[], int | None]):
        self.read_peak, self.reset, self.read_current = read_peak, reset, read_current

    def mark(self) -> tuple[int, int] | None:
        """``(peak bytes since the previous mark, bytes in use right after resetting the mark)``, or
        None when a reading or the reset failed (the sandbox is gone, or this kernel has no reset)."""
        peak = self.read_peak()
        if peak is None or not self.reset():
            return None
        current = self.read_current()
        return None if current is None else (int(peak), int(current))


def _status_kib(pid: int, key: str) -> int | None:
    """One ``kB`` field of ``/proc/<pid>/status`` (``VmHWM``, ``VmRSS``) in bytes; None if unreadable."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(key.encode() + b":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _write(path: str, text: str) -> bool:
    try:
        with open(path, "w") as fh:
            fh.write(text)
        return True
    except OSError:
        return False


def process_memory_watch(pid: "int | Callable[[], int | None]") -> MemoryWatch:
    """The runner's resident set: ``VmHWM`` since a reset (``clear_refs`` ``5``) and ``VmRSS``.

    ``pid``: the runner's host pid, or a callable giving it (None while it is not known yet: the
    process backend's box starts the runner as the launcher's grandchild)."""
    where = pid if callable(pid) else (lambda: pid)

    def status(key: str) -> int | None:
        current = where()
        return None if current is None else _status_kib(current, key)

    def reset() -> bool:
        current = where()
        return current is not None and _write(f"/proc/{current}/clear_refs", "5")

    return MemoryWatch(lambda: status("VmHWM"), reset, lambda: status("VmRSS"))


def cgroup_memory_dirs(container_id: str, root: str = CGROUP_ROOT) -> list[str]:
    """Where the container's memory cgroup may be: v1 ``memory/docker/<id>`` or
    ``memory/system.slice/docker-<id>.scope``; v2 ``system.slice/docker-<id>.scope`` or ``docker/<id>``."""
    scope = f"docker-{container_id}.scope"
    return [os.path.join(root, "memory", "docker", container_id),
            os.path.join(root, "memory", "system.slice", scope),
            os.path.join(root, "system.slice", scope), os.path.join(root, "docker", container_id)]


def _read_int(path: str) -> int | None:
    try:
        with open(path) as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return None


class _CgroupV2Peak:
    """``memory.peak`` through one open descriptor: a write resets it for that descriptor only."""

    def __init__(self, path: str):
        self.path, self.fd = path, None

    def _open(self) -> int | None:
        if self.fd is None:
            try:
                self.fd = os.open(self.path, os.O_RDWR)
            except OSError:
                return None
        return self.fd

    def read(self) -> int | None:
        fd = self._open()
        try:
            return None if fd is None else int(os.pread(fd, 64, 0).strip())
        except (OSError, ValueError):
            return None

    def reset(self) -> bool:
        fd = self._open()
        try:
            return fd is not None and os.write(fd, b"reset\n") > 0
        except OSError:  # before Linux 6.12 memory.peak is read-only
            return False

    def close(self) -> None:
        """Close the descriptor (also on garbage collection)."""
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None

    __del__ = close


def cgroup_memory_watch(container_id: str, root: str = CGROUP_ROOT) -> MemoryWatch:
    """The container's memory cgroup (v1 or v2, see ``cgroup_memory_dirs``); the folder is looked up on
    each mark until found (the cgroup exists only once the container has started)."""
    found: list = []

    def locate():
        if not found:
            for folder in cgroup_memory_dirs(container_id, root):
                if os.path.exists(os.path.join(folder, "memory.max_usage_in_bytes")):
                    path = os.path.join(folder, "memory.max_usage_in_bytes")
                    found.append((lambda p=path: _read_int(p), lambda p=path: _write(p, "0"),
                                  lambda f=folder: _read_int(os.path.join(f, "memory.usage_in_bytes"))))
                    break
                if os.path.exists(os.path.join(folder, "memory.peak")):
                    peak = _CgroupV2Peak(os.path.join(folder, "memory.peak"))
                    found.append((peak.read, peak.reset,
                                  lambda f=folder: _read_int(os.path.join(f, "memory.current"))))
                    break
        return found[0] if found else None

    def call(which: int):
        source = locate()
        return None if source is None else source[which]()

    return MemoryWatch(lambda: call(0), lambda: bool(call(1)), lambda: call(2))


class FrameSync:
    """The host's side of the frame handshake: follows frame boundaries in the result stream and
    acknowledges each boundary the stream ends on exactly (see the module docstring).

    Args:
        send: writes an acknowledgement to the runner (never blocks; errors are its own to swallow);
            None: boundaries are followed but nothing is sent.
    """

    #: Longest frame header accepted (``@@GRADER-FRAME <kind> <nbytes>\n``); past it, the stream is
    #: not the runner's and following stops.
    MAX_HEADER = 128

    def __init__(self, send: Callable[[bytes], None] | None = None):
        self.send = send
        self.frames = 0
        self.broken = False
        self._header = b""
        self._left: int | None = None  # payload bytes still to come; None: reading a header

    def feed(self, chunk: bytes) -> bool:
        """Follow ``chunk``; True when the stream now ends exactly at the end of a frame."""
        i, n = 0, len(chunk)
        while i < n and not self.broken:
            if self._left is None:
                j = chunk.find(b"\n", i, i + self.MAX_HEADER + 1)
                if j < 0:
                    self._header += chunk[i:]
                    self.broken = len(self._header) > self.MAX_HEADER
                    return False
                parts = (self._header + chunk[i:j]).split(b" ")
                self._header, i = b"", j + 1
                if len(parts) != 3 or parts[0] != FRAME_MAGIC or not parts[2].isdigit():
                    self.broken = True
                    return False
                self._left = int(parts[2])
            take = min(self._left, n - i)
            i += take
            self._left -= take
            if self._left == 0:
                self._left = None
                self.frames += 1
        return bool(n) and not self.broken and self._left is None and not self._header

    def ack(self) -> str | None:
        """Send the count of complete frames (``runner.COUNT_BYTES`` bytes, big-endian) and a fresh
        random token (the rest of ``runner.ACK_BYTES``); return the token's hex (None: nothing sent)."""
        if self.send is None:
            return None
        token = os.urandom(ACK_BYTES - COUNT_BYTES)
        try:
            self.send(self.frames.to_bytes(COUNT_BYTES, "big") + token)
        except Exception:  # noqa: BLE001 - an observation must never break a run
            self.send = None
            return None
        return token.hex()


class CpuTimeline:
    """Samples ``(bytes of the result stream received so far, CPU seconds of the sandbox)`` and, with
    a ``memory`` watch, ``(bytes received, peak bytes since the previous sample, bytes in use)``.

    The reader thread calls ``arrived(chunk, total_bytes)`` right after each chunk of the result
    stream arrives: it samples (``sample``) and, with a ``sync`` (``FrameSync``), acknowledges the
    frames once the chunk ends exactly at a frame boundary, after the sample. ``source`` returns the
    sandbox's CPU seconds (None: unreadable, not recorded).
    """

    def __init__(self, source: Callable[[], float | None] | None, memory: MemoryWatch | None = None,
                 sync: FrameSync | None = None):
        self.source = source
        self.memory = memory
        self.sync = sync
        self.samples: list[tuple[int, float]] = []
        self.memory_samples: list[tuple[int, int, int]] = []
        #: the token acknowledged at each exact frame boundary, by bytes of the stream received
        self.tokens: dict[int, str] = {}
        self._lock = threading.Lock()

    def arrived(self, chunk: bytes, total_bytes: int) -> None:
        """Sample after ``chunk`` arrived (the stream now holds ``total_bytes``); acknowledge the
        frames if it ends exactly at a frame's end (never raises)."""
        boundary = self.sync is not None and self.sync.feed(chunk)
        self.sample(total_bytes)
        if boundary:
            token = self.sync.ack()
            if token is not None:
                with self._lock:
                    self.tokens[int(total_bytes)] = token

    def sample(self, total_bytes: int) -> None:
        """Record the CPU seconds (and the memory mark) now against ``total_bytes`` received (never
        raises). A failed memory mark ends the memory record: a gap would merge two steps' peaks."""
        if self.memory is not None:
            try:
                marked = self.memory.mark()
            except Exception:  # noqa: BLE001 - an observation must never break a run
                marked = None
            with self._lock:
                if marked is None:
                    self.memory = None
                else:
                    self.memory_samples.append((int(total_bytes), *marked))
        if self.source is None:
            return
        try:
            seconds = self.source()
        except Exception:  # noqa: BLE001 - an observation must never break a run
            return
        if seconds is not None:
            with self._lock:
                self.samples.append((int(total_bytes), float(seconds)))

    def peak_between(self, start: int, end: int) -> int | None:
        """Observed peak bytes above the usage at the sample taken when the stream held exactly
        ``start`` bytes, up to the sample taken when it held exactly ``end`` bytes; None when either
        boundary was not sampled exactly (a chunk ran past it, or the source could no longer be read:
        the runner did not wait for the host there)."""
        with self._lock:
            samples = list(self.memory_samples)
        first = next((i for i, s in enumerate(samples) if s[0] >= start), None)
        if first is None or samples[first][0] != start:
            return None
        last = next((i for i, s in enumerate(samples) if s[0] >= end), None)
        if last is None or last <= first or samples[last][0] != end:
            return None
        peak = max(s[1] for s in samples[first + 1:last + 1])
        return max(0, peak - samples[first][2])

    @property
    def memory_readable(self) -> bool:
        """Whether the memory source was read at least once in this run."""
        with self._lock:
            return bool(self.memory_samples)

    def at(self, offset: int) -> float | None:
        """CPU seconds sampled when the stream first held ``offset`` bytes, or None if never sampled."""
        with self._lock:
            for total, seconds in self.samples:
                if total >= offset:
                    return seconds
        return None


def attach_observed(results: RunResults, timeline: CpuTimeline) -> None:
    """Attach what the host observed to each decoded step: CPU seconds (``attach_observed_cpu``) and
    peak bytes (``attach_observed_memory``)."""
    attach_observed_cpu(results, timeline)
    attach_observed_memory(results, timeline)


def attach_observed_memory(results: RunResults, timeline: CpuTimeline) -> None:
    """Set each decoded step's ``observed_peak_bytes``: the sandbox's peak memory above its usage at
    the arrival of the frame before it, up to the arrival of its own (see ``CpuTimeline.peak_between``;
    host-side, nothing read from the frames but their boundaries). Unobserved steps keep None; those
    unobserved although the memory source was readable in this run get ``observed_peak_missed``
    (under the handshake that happens only when the runner did not wait for the host: a measured
    step must echo the token the host acknowledged at the frame before it, ``sync_token``)."""
    readable = timeline.memory_readable
    with timeline._lock:
        tokens = dict(timeline.tokens)
    previous = None
    for kind, step_id, end in results.frame_ends:
        if kind == "step" and step_id in results.steps and previous is not None:
            step = results.steps[step_id]
            step.observed_peak_bytes = timeline.peak_between(previous, end)
            measured = "measure" in step.report or "sync_token" in step.report
            if timeline.sync is not None and measured and (
                    tokens.get(previous) is None or step.report.get("sync_token") != tokens[previous]):
                # a measured step that does not echo the token the host acknowledged at the frame
                # before it began without waiting for the host's mark there: its window is not exact
                # (the runner's wait patched out, its acknowledgements closed, forged or stolen)
                step.observed_peak_bytes = None
            step.observed_peak_missed = readable and step.observed_peak_bytes is None
        previous = end


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
