"""The ``process`` backend: the runner in a child process with rlimits (the embedded default).

Isolation here is weaker than Docker's and the scorecard says so: rlimits on CPU seconds, address
space, file size, open files and processes; a scratch working folder; a scrubbed environment; a
network namespace of its own where the kernel permits ``unshare(CLONE_NEWNET)``; an unprivileged
user where the host runs as root and the interpreter is reachable by that user. It is meant for
self-checks and development; ``--require-isolation`` refuses it.
"""

from __future__ import annotations

import ctypes
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from grader.run.channel import decode_stream, display_text
from grader.sandbox.base import CappedBuffer, Limits, SandboxInfo, SandboxJob, SandboxRun, SandboxUnavailable

CLONE_NEWNET = 0x40000000
NOBODY_UID = 65534
#: Environment variables passed through: they pick correct OpenBLAS kernels on some CPUs.
PASS_THROUGH_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


class CappedReader(threading.Thread, CappedBuffer):
    """Drain a pipe in a thread into a ``CappedBuffer``: at most ``cap`` bytes kept, the rest counted.

    Draining continues past the cap so the writer never blocks on a full pipe.
    """

    def __init__(self, stream, cap: int):
        threading.Thread.__init__(self, daemon=True)
        CappedBuffer.__init__(self, cap)
        self.stream = stream

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


def _world_executable(path: str) -> bool:
    """Whether every folder above ``path`` and the file itself are executable by others."""
    p = Path(path).resolve()
    for part in [*reversed(p.parents), p]:
        try:
            if not os.stat(part).st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


def _can_unshare_net() -> bool:
    """Probe (in a throwaway child) whether this process may create a network namespace."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        libc = ctypes.CDLL(None, use_errno=True)
        os._exit(0 if libc.unshare(CLONE_NEWNET) == 0 else 1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


class ProcessSandbox:
    """Run the runner as a local child process; see the module docstring for what is isolated."""

    name = "process"

    def __init__(self, python: str | None = None):
        self.python = python or sys.executable
        self._net = _can_unshare_net()
        self._drop_user = os.geteuid() == 0 and _world_executable(self.python)

    def info(self) -> SandboxInfo:
        """Isolation actually in force on this host."""
        return SandboxInfo(backend=self.name, isolation={
            "network": "none (own namespace)" if self._net else "shared with host",
            "user": "nobody" if self._drop_user else ("root" if os.geteuid() == 0 else "invoking user"),
            "filesystem": "host filesystem, scratch working folder",
            "rlimits": ["cpu", "address_space", "file_size", "open_files", "processes"],
        })

    def _preexec(self, limits: Limits):
        net, drop = self._net, self._drop_user

        def setup() -> None:  # runs in the child between fork and exec
            os.setsid()
            if net:
                ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWNET)
            cpu = int(limits.cpu_seconds)
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
            resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_bytes, limits.file_size_bytes))
            resource.setrlimit(resource.RLIMIT_NOFILE, (limits.max_open_files, limits.max_open_files))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if drop:
                os.setgroups([])
                os.setgid(NOBODY_UID)
                os.setuid(NOBODY_UID)
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.max_processes, limits.max_processes))

        return setup

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
        input_dir, scratch = os.path.join(root, "input"), os.path.join(root, "scratch")
        os.mkdir(input_dir)
        os.mkdir(scratch)
        for name, data in job.input_files().items():
            with open(os.path.join(input_dir, name), "wb") as fh:
                fh.write(data)
            os.chmod(os.path.join(input_dir, name), 0o444)
        os.chmod(root, 0o755)
        os.chmod(input_dir, 0o555)
        if self._drop_user:
            os.chown(scratch, NOBODY_UID, NOBODY_UID)
        argv = [self.python, "-I", os.path.join(input_dir, "runner.py"), input_dir]
        start = time.monotonic()
        try:
            proc = subprocess.Popen(argv, cwd=scratch, env=self._environment(scratch, limits),
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, preexec_fn=self._preexec(limits),
                                    close_fds=True)
        except OSError as exc:
            raise SandboxUnavailable(f"could not start {self.python}: {exc}") from exc
        results_reader = CappedReader(proc.stdout, limits.result_bytes)
        output_reader = CappedReader(proc.stderr, limits.output_bytes)
        results_reader.start()
        output_reader.start()
        timed_out = False
        try:
            proc.wait(timeout=limits.wall_seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            # the whole session: children and grandchildren that kept the process group go too
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
        # A daemon that left the session may hold the pipes open: do not wait on it forever.
        results_reader.join(timeout=5)
        output_reader.join(timeout=5)
        proc.stdout.close()
        proc.stderr.close()
        exit_code = proc.returncode
        if exit_code in (-signal.SIGXCPU, -signal.SIGKILL) and not timed_out:
            # SIGXCPU: the CPU-seconds rlimit; SIGKILL at the hard CPU limit
            timed_out = exit_code == -signal.SIGXCPU
        return SandboxRun(
            results=decode_stream(results_reader.data, truncated=results_reader.truncated),
            exit_code=exit_code,
            timed_out=timed_out,
            oom_killed=False,
            output=display_text(output_reader.data),
            output_truncated=output_reader.truncated,
            wall_seconds=time.monotonic() - start,
        )
