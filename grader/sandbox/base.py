"""The sandbox interface: what a backend is given, what it returns, and the limits it enforces.

A backend runs ``grader/run/runner.py`` on a job (plan, input arrays, submission source) and returns the
decoded result channel plus what it observed from outside (exit code, timeout, OOM kill, captured
stderr). Backends never judge: verdicts are computed on the host from ``SandboxRun``.
"""

from __future__ import annotations

import io
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from grader.run.channel import RunResults

RUNNER_PATH = Path(__file__).resolve().parent.parent / "run" / "runner.py"
INSTRUMENTS_PATH = RUNNER_PATH.parent / "instruments.py"


class CappedBuffer:
    """Keeps the first ``cap`` bytes fed to it and counts them all (the byte-counted channel)."""

    def __init__(self, cap: int):
        self.cap = cap
        self.chunks: list[bytes] = []
        self.kept = 0
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        """Count ``chunk``; keep what still fits under the cap."""
        self.total += len(chunk)
        room = self.cap - self.kept
        if room > 0:
            self.chunks.append(chunk[:room])
            self.kept += min(room, len(chunk))

    @property
    def data(self) -> bytes:
        """The bytes kept (at most ``cap``)."""
        return b"".join(self.chunks)

    @property
    def truncated(self) -> bool:
        """More bytes arrived than were kept."""
        return self.total > self.kept


@dataclass(frozen=True)
class Limits:
    """Resource limits for one sandbox run.

    Attributes:
        wall_seconds: wall-clock deadline for the whole run, enforced by the host (seconds).
        cpu_seconds: CPU time for the whole run (seconds).
        memory_bytes: address space (process backend) or memory cgroup limit (docker) (bytes).
        step_seconds: CPU-time limit of one plan step, enforced inside the runner (seconds; the
            same under any load), with a wall-clock backstop of several times that.
        output_bytes: how much of the submission's stdout/stderr is kept for display (bytes).
        result_bytes: cap on the result channel; bytes past it are discarded (bytes).
        max_processes: process/thread limit.
        max_open_files: open file descriptor limit.
        file_size_bytes: largest file the submission may write (bytes).
    """

    wall_seconds: float = 60.0
    cpu_seconds: int = 60
    memory_bytes: int = 2 * 1024**3
    step_seconds: float = 10.0
    output_bytes: int = 64 * 1024
    result_bytes: int = 256 * 1024 * 1024
    max_processes: int = 64
    max_open_files: int = 256
    file_size_bytes: int = 16 * 1024 * 1024

    def to_json(self) -> dict:
        """Limits as a JSON-able dict (keys are the attribute names; units in the names' docs)."""
        return asdict(self)


@dataclass
class SandboxJob:
    """What one sandbox run is given: nothing else of the grader enters the sandbox.

    Attributes:
        plan: the plan document (``plan.json``), see ``grader.run.runner``.
        arrays: input arrays by name (written as ``arrays.npz``, no pickles).
        submission: the submission's source bytes (written as ``submission.py``).
        needs_torch: the plan uses torch tensors (backends may pick an image or warm-up by it).
    """

    plan: dict
    arrays: dict[str, np.ndarray]
    submission: bytes
    needs_torch: bool = False

    def input_files(self) -> dict[str, bytes]:
        """The files of the sandbox's input folder, by name."""
        buf = io.BytesIO()
        np.savez(buf, **self.arrays)
        return {
            "plan.json": json.dumps(self.plan).encode("utf-8"),
            "arrays.npz": buf.getvalue(),
            "submission.py": self.submission,
            "runner.py": RUNNER_PATH.read_bytes(),
            "instruments.py": INSTRUMENTS_PATH.read_bytes(),
        }


@dataclass
class SandboxRun:
    """What a backend observed.

    Attributes:
        results: decoded result channel.
        exit_code: the runner process's exit code (negative: killed by that signal), None if unknown.
        timed_out: the host's wall-clock deadline or the CPU limit ended the run.
        oom_killed: the memory limit ended the run.
        output: the submission's captured stdout+stderr, decoded with replacement, control
            characters escaped (``channel.display_text``), truncated.
        output_truncated: more output was produced than kept.
        wall_seconds: how long the run took (seconds).
        infrastructure_error: set when the backend itself failed (never the candidate's fault).
        stopped: why the host stopped a run for the submission's own excess (e.g. output far past
            its cap), or None; such a run is the candidate's fault, like a timeout.
    """

    results: RunResults
    exit_code: int | None = None
    timed_out: bool = False
    oom_killed: bool = False
    output: str = ""
    output_truncated: bool = False
    wall_seconds: float = 0.0
    infrastructure_error: str | None = None
    stopped: str | None = None


@dataclass(frozen=True)
class SandboxInfo:
    """How a run was isolated, as recorded in the scorecard's ``sandbox`` section."""

    backend: str
    isolation: dict = field(default_factory=dict)
    image: str | None = None


class Sandbox(Protocol):
    """A sandbox backend."""

    name: str

    def info(self) -> SandboxInfo:
        """Describe the isolation this backend provides here."""

    def run(self, job: SandboxJob, limits: Limits) -> SandboxRun:
        """Run the runner on ``job`` within ``limits``; never raises for the submission's faults.

        Raises:
            SandboxUnavailable: the backend cannot run at all (an infrastructure fault).
        """


class SandboxUnavailable(RuntimeError):
    """The backend cannot run here (no engine, no image, ...): an infrastructure fault."""


def sweep_orphan_folders(prefix: str, tmp: str | None = None) -> list[str]:
    """Remove the folders ``<tmp>/<prefix><pid>-...`` whose owning grader process ``pid`` is gone
    (warm sandboxes of a grader killed before it could discard them; their waiting runners exit on
    end of file). ``tmp``: default the system temporary folder. Returns the folders removed."""
    import os  # noqa: PLC0415
    import shutil  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    tmp = tmp or tempfile.gettempdir()
    removed = []
    try:
        names = os.listdir(tmp)
    except OSError:
        return removed
    for name in names:
        pid = name[len(prefix):].split("-", 1)[0] if name.startswith(prefix) else ""
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)
            removed.append(os.path.join(tmp, name))
    return removed
