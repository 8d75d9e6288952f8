"""The ``process`` backend: the runner in a child process with rlimits (the embedded default).

Each run starts ``grader/sandbox/launch.py`` (a fresh process), which sets the run up and execs the
runner. Where the grader runs as root: a private mount namespace and an empty network namespace,
small private tmpfs mounts over ``/tmp``, ``/var/tmp``, ``/dev/shm`` and over whatever folder hides
the interpreter from other users (e.g. ``/root``), the interpreter's folders bound back read-only,
then the submission runs as ``nobody`` (uid 65534): it can write only its scratch folder and
reach no network. Elsewhere: a user and network namespace where the kernel allows it (no network),
the invoking user. Always: rlimits on CPU seconds, address space, file size, open files and
processes; a scratch working folder; a scrubbed environment; its own session (killed as a group).
Isolation is weaker than Docker's (shared kernel, process table and read-only view of the host's
world-readable files) and the scorecard says what was in force; ``--require-isolation`` refuses it.

The runner's stdin is a pipe from the host (``AckPipe``): a warm runner's ``go`` line, then the frame
handshake's acknowledgements (``grader.sandbox.observe``); the runner keeps it on a private
descriptor and gives the submission ``/dev/null`` as stdin.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from grader.run.channel import decode_stream, display_text
from grader.run.runner import READY_LINE, SYNC_FLAG
from grader.sandbox.base import (INSTRUMENTS_PATH, RUNNER_PATH, CappedBuffer, Limits, SandboxInfo, SandboxJob,
                                 SandboxRun, SandboxUnavailable, sweep_orphan_folders)
from grader.sandbox.deadline import wait_for_run
from grader.sandbox.observe import (CpuTimeline, FrameSync, attach_observed, process_memory_watch,
                                    process_tree_cpu_seconds)

NOBODY_UID = 65534
#: Environment variables passed through: they pick correct OpenBLAS kernels on some CPUs.
PASS_THROUGH_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


class CappedReader(threading.Thread, CappedBuffer):
    """Drain a pipe in a thread into a ``CappedBuffer``: at most ``cap`` bytes kept, the rest counted.

    Draining continues past the cap so the writer never blocks on a full pipe.
    """

    def __init__(self, stream, cap: int, timeline: CpuTimeline | None = None, acks: "AckPipe | None" = None):
        threading.Thread.__init__(self, daemon=True)
        CappedBuffer.__init__(self, cap)
        self.stream = stream
        self.timeline = timeline  # sampled after each chunk (the host's CPU-time observation)
        self.acks = acks  # the runner's stdin, where the timeline acknowledges frames

    def run(self) -> None:  # noqa: D102
        fd = self.stream.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            self.feed(chunk)
            if self.timeline is not None:
                self.timeline.arrived(chunk, self.total)


class AckPipe:
    """The host's end of the runner's stdin, for the frame handshake's acknowledgements
    (``observe.FrameSync``): written non-blocking (a runner that never reads cannot stall the host's
    reader; an acknowledgement that does not fit is dropped), closed once under a lock so that a late
    acknowledgement never reaches a descriptor number reused since."""

    def __init__(self, stream):
        self.stream = stream
        self.fd: int | None = stream.fileno()
        self._lock = threading.Lock()
        os.set_blocking(self.fd, False)

    def send(self, data: bytes) -> None:
        """Write ``data`` if it fits now; drop it otherwise (never raises)."""
        with self._lock:
            if self.fd is None:
                return
            try:
                os.write(self.fd, data)
            except OSError:  # full (the runner does not read), or the runner is gone
                pass

    def close(self) -> None:
        """Close the pipe (idempotent): the runner reads end of file."""
        with self._lock:
            self.fd = None
            try:
                self.stream.close()
            except OSError:
                pass


LAUNCHER_PATH = Path(__file__).resolve().parent / "launch.py"


def interpreter_folders(python: str) -> list[str]:
    """The folders the sandboxed interpreter must read: its installation (prefix) and every
    site-packages folder, numpy's and torch's included (for ``launch.py``'s read-only binds)."""
    import importlib.util  # noqa: PLC0415
    import site  # noqa: PLC0415

    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix,
               os.path.dirname(os.path.dirname(os.path.realpath(python)))}
    try:
        folders.update(site.getsitepackages())
        folders.add(site.getusersitepackages())
    except AttributeError:  # pragma: no cover - a virtualenv's old site.py
        pass
    for name in ("numpy", "torch"):
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec else []:
            folders.add(os.path.dirname(location))
    return sorted(f for f in folders if f and os.path.isdir(f))


@functools.lru_cache(maxsize=4)
def probe_isolation(python: str) -> dict:
    """Run ``launch.py`` once with a tiny program to learn what isolation it achieves here.

    Returns:
        ``{"user": "nobody" | "root" | "invoking user", "network": bool, "why": str}``: the uid the
        program ran as, whether it had its own network namespace, and why privileges could not be
        dropped (empty when they were, or when the grader is not root).
    """
    root = tempfile.mkdtemp(prefix="grade-process-probe-")
    try:
        os.chmod(root, 0o755)
        scratch = os.path.join(root, "scratch")
        os.mkdir(scratch)
        drop = os.geteuid() == 0
        if drop:
            os.chown(scratch, NOBODY_UID, NOBODY_UID)
        program = ("import os, sys; open('probe', 'w').write('ok'); "
                   "print(os.getuid(), os.readlink('/proc/self/ns/net'))")
        cfg = _launch_config([python, "-I", "-S", "-c", program], {"PATH": "/usr/bin:/bin"}, scratch, root, python,
                             Limits(), drop)
        proc = subprocess.run([python, "-I", "-S", str(LAUNCHER_PATH), json.dumps(cfg)], capture_output=True,
                              text=True, timeout=30, start_new_session=True)
        if proc.returncode != 0:
            return {"user": "root" if drop else "invoking user", "network": False,
                    "why": (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]}
        uid, net = proc.stdout.split()
        own_net = net != os.readlink("/proc/self/ns/net")
        user = "nobody" if int(uid) == NOBODY_UID else ("root" if int(uid) == 0 else "invoking user")
        return {"user": user, "network": own_net, "why": ""}
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return {"user": "root" if os.geteuid() == 0 else "invoking user", "network": False, "why": str(exc)}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _launch_config(argv: list[str], env: dict, scratch: str, root: str, python: str, limits: Limits,
                   drop: bool) -> dict:
    """The JSON config ``launch.py`` reads (see its docstring)."""
    return {"argv": argv, "env": env, "cwd": scratch, "keep_rw": [root], "keep_ro": interpreter_folders(python),
            "uid": NOBODY_UID if drop else None, "gid": NOBODY_UID if drop else None,
            "tmpfs_bytes": 16 << 20,
            "limits": {"cpu": int(limits.cpu_seconds), "as": int(limits.memory_bytes),
                       "fsize": int(limits.file_size_bytes), "nofile": int(limits.max_open_files),
                       "nproc": int(limits.max_processes)}}


class ProcessSandbox:
    """Run the runner as a local child process; see the module docstring for what is isolated."""

    name = "process"

    def __init__(self, python: str | None = None):
        self.python = python or sys.executable
        probe = probe_isolation(self.python) if os.path.exists(self.python) else {
            "user": "root" if os.geteuid() == 0 else "invoking user", "network": False, "why": "no interpreter"}
        self._net = probe["network"]
        self._drop_user = os.geteuid() == 0 and probe["user"] == "nobody"
        self._why = probe["why"]

    def info(self) -> SandboxInfo:
        """Isolation actually in force on this host (as ``probe_isolation`` found it)."""
        user = "nobody" if self._drop_user else ("root" if os.geteuid() == 0 else "invoking user")
        return SandboxInfo(backend=self.name, isolation={
            "network": "none (own namespace)" if self._net else "shared with host",
            "user": user + (f" (could not drop privileges: {self._why})" if user == "root" and self._why else ""),
            "filesystem": ("host filesystem read-only to the submission except its scratch folder; private "
                           "tmpfs over /tmp, /var/tmp, /dev/shm" if self._drop_user
                           else "host filesystem, scratch working folder"),
            "rlimits": ["cpu", "address_space", "file_size", "open_files", "processes"],
        })

    def _environment(self, scratch: str, limits: Limits) -> dict[str, str]:
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": scratch,
            "TMPDIR": scratch,
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
        }
        env.update({k: os.environ[k] for k in PASS_THROUGH_ENV if k in os.environ})
        return env

    def run(self, job: SandboxJob, limits: Limits) -> SandboxRun:
        """Run ``job`` in a child process; see ``Sandbox.run``."""
        root = tempfile.mkdtemp(prefix="grade-process-")
        try:
            return self._run_in(root, job, limits)
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def _run_in(self, root: str, job: SandboxJob, limits: Limits) -> SandboxRun:
        input_dir = self._prepare(root)
        _write_job(input_dir, job)
        start = time.monotonic()
        proc, readers = self._spawn(root, limits, wait_for_job=None)
        return self._attend(proc, readers, limits, start)

    def _prepare(self, root: str) -> str:
        """Make ``root/input`` (holding the runner) and ``root/scratch`` (the submission's, owned by
        ``nobody`` when privileges are dropped); return the input folder."""
        input_dir, scratch = os.path.join(root, "input"), os.path.join(root, "scratch")
        os.mkdir(input_dir)
        os.mkdir(scratch)
        os.chmod(root, 0o755)
        os.chmod(input_dir, 0o755)
        for name, path in (("runner.py", RUNNER_PATH), ("instruments.py", INSTRUMENTS_PATH)):
            _write_readonly(os.path.join(input_dir, name), path.read_bytes())
        if self._drop_user:
            os.chown(scratch, NOBODY_UID, NOBODY_UID)
        return input_dir

    def _spawn(self, root: str, limits: Limits, wait_for_job: str | None):
        """Start the launcher on the runner in ``root``; with ``wait_for_job`` (``numpy`` or
        ``torch``) the runner imports that runtime and blocks reading its stdin until the host has
        written the job (``runner.py --wait``). Returns ``(proc, (results_reader, output_reader))``.

        Raises:
            SandboxUnavailable: the interpreter cannot be started.
        """
        input_dir, scratch = os.path.join(root, "input"), os.path.join(root, "scratch")
        argv = [self.python, "-I", os.path.join(input_dir, "runner.py")]
        argv += (["--wait", wait_for_job] if wait_for_job else []) + [SYNC_FLAG, input_dir]
        cfg = _launch_config(argv, self._environment(scratch, limits), scratch, root, self.python, limits,
                             self._drop_user)
        try:
            proc = subprocess.Popen([self.python, "-I", "-S", str(LAUNCHER_PATH), json.dumps(cfg)], cwd=scratch,
                                    env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                                    stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True, close_fds=True)
        except OSError as exc:
            raise SandboxUnavailable(f"could not start {self.python}: {exc}") from exc
        acks = AckPipe(proc.stdin)  # the go line (warm) and the frame handshake's acknowledgements
        timeline = CpuTimeline(lambda: process_tree_cpu_seconds(proc.pid), memory=process_memory_watch(proc.pid),
                               sync=FrameSync(acks.send))
        readers = (CappedReader(proc.stdout, limits.result_bytes, timeline, acks),
                   CappedReader(proc.stderr, limits.output_bytes))
        readers[1].start()
        if not wait_for_job:
            readers[0].start()
        return proc, readers

    def start_warm(self, runtime: str, limits: Limits) -> "WarmProcess":
        """Start a runner ahead of its job (the warm pool, ``grader.sandbox.pool``): a fresh launcher
        and runner with ``limits`` already in force, ``runtime`` (``numpy`` or ``torch``) imported,
        waiting on its stdin. Give it exactly one job with ``run_warm``, or ``discard`` it.

        Raises:
            SandboxUnavailable: the interpreter cannot be started.
        """
        root = tempfile.mkdtemp(prefix=f"{WARM_PREFIX}{os.getpid()}-")
        try:
            self._prepare(root)
            proc, readers = self._spawn(root, limits, wait_for_job=runtime)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        warm = WarmProcess(root=root, proc=proc, readers=readers, limits=limits, runtime=runtime)
        warm.ready_thread.start()
        return warm

    @staticmethod
    def sweep_warm_folders() -> list[str]:
        """See the module function ``sweep_warm_folders`` (called by ``WarmPool`` at its start)."""
        return sweep_warm_folders()

    def run_warm(self, warm: "WarmProcess", job: SandboxJob) -> SandboxRun:
        """Give ``warm`` its one job and attend the run (``Sandbox.run``'s contract; the wall-clock
        deadline counts from the job's delivery). The process and its folder are gone afterwards,
        whatever happened. A warm runner that already died gives an ``infrastructure_error`` run.
        """
        try:
            if warm.used:
                raise RuntimeError("a warm sandbox runs one job only")
            warm.used = True
            _write_job(os.path.join(warm.root, "input"), job)
            start = time.monotonic()
            try:
                os.write(warm.proc.stdin.fileno(), b"go\n")  # stdin stays open: the handshake's acks follow
            except (OSError, ValueError) as exc:
                warm.discard()
                return SandboxRun(results=decode_stream(b""), infrastructure_error=(
                    f"the warm sandbox had ended before its job arrived ({type(exc).__name__})"))
            return self._attend(warm.proc, warm.readers, warm.limits, start, warm.ready_thread)
        finally:
            warm.discard()

    def _attend(self, proc, readers, limits: Limits, start: float, ready_thread=None) -> SandboxRun:
        results_reader, output_reader = readers
        timeline = results_reader.timeline
        timed_out = False

        def finished(timeout: float) -> bool:
            try:
                proc.wait(timeout=timeout)
                return True
            except subprocess.TimeoutExpired:
                return False

        try:
            # the wall-clock limit, with an allowance while the run computes on a loaded host
            timed_out = wait_for_run(finished, lambda: process_tree_cpu_seconds(proc.pid), limits.wall_seconds,
                                     float(limits.cpu_seconds), start)
        finally:
            # the whole session: children and grandchildren that kept the process group go too
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
            readers[0].acks.close()
        # A daemon that left the session may hold the pipes open: do not wait on it forever.
        if ready_thread is not None:
            ready_thread.join(timeout=5)  # it starts the result channel's reader
        if results_reader.ident is not None:
            results_reader.join(timeout=5)
        output_reader.join(timeout=5)
        proc.stdout.close()
        proc.stderr.close()
        exit_code = proc.returncode
        if exit_code in (-signal.SIGXCPU, -signal.SIGKILL) and not timed_out:
            # SIGXCPU: the CPU-seconds rlimit; SIGKILL at the hard CPU limit
            timed_out = exit_code == -signal.SIGXCPU
        results = decode_stream(results_reader.data, truncated=results_reader.truncated)
        attach_observed(results, timeline)
        return SandboxRun(
            results=results,
            exit_code=exit_code,
            timed_out=timed_out,
            oom_killed=False,
            output=display_text(output_reader.data),
            output_truncated=output_reader.truncated,
            wall_seconds=time.monotonic() - start,
        )


#: Folder-name prefix of warm sandboxes: ``grade-process-warm-<pid of the grader that owns it>-...``.
WARM_PREFIX = "grade-process-warm-"


def sweep_warm_folders(tmp: str | None = None) -> list[str]:
    """Remove the folders of warm sandboxes whose owning grader process is gone (one killed before
    it could discard them; its waiting runners exited on their own). Returns the folders removed."""
    return sweep_orphan_folders(WARM_PREFIX, tmp)


def _write_readonly(path: str, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
    os.chmod(path, 0o444)


def _write_job(input_dir: str, job: SandboxJob) -> None:
    """Write the job's files into ``input_dir`` (read-only), then make the folder read-only."""
    for name, data in job.input_files().items():
        if name in ("runner.py", "instruments.py") and os.path.exists(os.path.join(input_dir, name)):
            continue
        _write_readonly(os.path.join(input_dir, name), data)
    os.chmod(input_dir, 0o555)


class WarmProcess:
    """A runner started ahead of its one job (``ProcessSandbox.start_warm``).

    Attributes:
        root: its run folder (``input/``, ``scratch/``), removed by ``discard``.
        proc: the launcher/runner process (its own session).
        readers: the result-channel and output readers, draining since the start.
        limits: the limits in force (rlimits are set at the start, so a job needs equal limits).
        runtime: ``numpy`` or ``torch``: what it imported while waiting.
        used: it was given its job (never given another).
        ready: set once its runtime is imported (it wrote ``runner.READY_LINE``).
    """

    def __init__(self, root: str, proc, readers, limits: Limits, runtime: str):
        self.root, self.proc, self.readers, self.limits, self.runtime = root, proc, readers, limits, runtime
        self.used = False
        self.started = time.monotonic()
        #: set once the runner has imported its runtime and waits for the job
        self.ready = threading.Event()
        #: reads the ready line, then starts the result channel's reader
        self.ready_thread = threading.Thread(target=self._await_ready, daemon=True, name="warm-ready")

    def _await_ready(self) -> None:
        """Read the runner's ready line off the result channel, then start the channel's reader."""
        fd, seen = self.proc.stdout.fileno(), b""
        try:
            while len(seen) < len(READY_LINE) and READY_LINE.startswith(seen):
                chunk = os.read(fd, len(READY_LINE) - len(seen))
                if not chunk:
                    break
                seen += chunk
        except OSError:
            pass
        if seen == READY_LINE:
            self.ready.set()
        else:  # not the runner's line (it died importing): keep what came for the record
            self.readers[0].feed(seen)
        self.readers[0].start()

    def alive(self) -> bool:
        """The runner is still waiting (it has not exited)."""
        return self.proc.poll() is None

    def discard(self) -> None:
        """Kill the process's session and remove its folder (idempotent)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL of our own child
            pass
        self.ready_thread.join(timeout=5)
        for reader in self.readers:
            if reader.ident is not None:
                reader.join(timeout=5)
        self.readers[0].acks.close()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except (OSError, AttributeError):
                pass
        shutil.rmtree(self.root, ignore_errors=True)
