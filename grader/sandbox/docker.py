"""The ``docker`` backend: the runner in a fresh, hardened container per run (the real sandbox).

One container per run, created from the image that ``grade sandbox build`` makes
(``grader.sandbox.image``), with: no network, a read-only root, user 65534 (nobody), every
capability dropped, ``no-new-privileges``, a pids limit, a memory limit with swap equal to it, a CPU
quota, a small ``noexec`` tmpfs at ``/tmp`` whose size is added to the memory limit (tmpfs pages are
charged to the container's memory cgroup), ``--init`` (tini as PID 1), capped json-file logs, a
label for sweeping and an explicit name; and, where ``$GRADER_DOCKER_RUNTIME`` names one (gVisor's
``runsc``), an OCI runtime that puts a user-space kernel between the submission and the host's.

Inputs (plan, arrays, submission, runner) go in through a read-only bind mount of a host temporary
folder whose files are mode 0444 in a 0555 folder: nothing the container does can write to the host.
(The engine refuses ``put_archive`` into a container whose root is read-only.)

Results come back on the container's stdout (the runner's result channel; the submission's own
output goes to stderr), read while the container runs through one attach stream, byte-counted,
capped, and decoded with ``grader.run.channel.decode_stream`` (no pickle; ``.npy`` headers and zip sizes
are checked before anything is loaded). The host owns the wall clock: at the deadline, or when the
output runs far past its cap, the container is killed; it is removed in a ``finally`` (also on
Ctrl-C, SIGTERM and grader exceptions), and leftovers of crashed graders are swept by label.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
import uuid

import docker
import requests
from docker.errors import APIError, DockerException, ImageNotFound, NotFound
from docker.types import LogConfig, Mount, Ulimit

from grader.run.channel import decode_stream, display_text
from grader.sandbox.base import CappedBuffer, Limits, SandboxInfo, SandboxJob, SandboxRun, SandboxUnavailable
from grader.sandbox.image import CONTAINER_LABEL, image_name
from grader.sandbox.observe import CpuTimeline, attach_observed_cpu, cgroup_cpu_source

#: Label holding the Unix time after which a container of ours is a leftover, whatever its state.
DEADLINE_LABEL = "attention-grader.deadline"
#: Label naming the grader process that owns a container: ``<hostname>:<pid>``.
OWNER_LABEL = "attention-grader.owner"
#: Where the inputs are mounted (read-only) inside the container.
INPUT_DIR = "/sandbox/input"
NOBODY = "65534:65534"
#: The scratch tmpfs: 1/16 of the memory limit, between these bounds (bytes).
TMPFS_MIN_BYTES = 16 * 1024**2
TMPFS_MAX_BYTES = 64 * 1024**2
#: CPUs the container may use (a quota: the container still sees every CPU, hence the thread caps).
CPUS = 1.0
#: The submission's output is kept up to ``Limits.output_bytes``; past this many times that, the
#: container is killed (streaming output through the engine is expensive for the host).
OUTPUT_KILL_FACTOR = 256
#: Seconds allowed for the engine to stop a killed container, and for a stream to drain.
KILL_GRACE_S = 10.0
#: Seconds added to a run's wall limit before a container of ours counts as a leftover.
SWEEP_GRACE_S = 120.0
#: Largest json-file log the engine keeps per container (we never read it: we stream).
LOG_MAX_SIZE = "1m"
#: Environment variable naming the OCI runtime containers run under, e.g. ``runsc`` (gVisor), which
#: must be configured in the engine; unset: the engine's default (``runc``). See SECURITY.md.
RUNTIME_ENV = "GRADER_DOCKER_RUNTIME"

#: Containers this process has created and not yet removed (removed at exit if still there).
_ACTIVE: dict[str, object] = {}
_ACTIVE_LOCK = threading.Lock()


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def tmpfs_bytes(limits: Limits) -> int:
    """Size of the ``/tmp`` tmpfs for ``limits`` (bytes): 1/16 of memory, within fixed bounds."""
    return max(TMPFS_MIN_BYTES, min(TMPFS_MAX_BYTES, limits.memory_bytes // 16))


def container_memory_bytes(limits: Limits) -> int:
    """The memory cgroup limit (and memory+swap): the run's memory plus a full tmpfs (bytes)."""
    return limits.memory_bytes + tmpfs_bytes(limits)


def _environment() -> dict[str, str]:
    return {
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        # --cpus is a quota only: the container still sees every CPU, so cap the thread pools
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def runtime_name() -> str | None:
    """The OCI runtime asked for by ``$GRADER_DOCKER_RUNTIME`` (None: the engine's default)."""
    return os.environ.get(RUNTIME_ENV) or None


def container_options(limits: Limits, input_dir: str, runtime: str | None = None) -> dict:
    """Keyword arguments of ``containers.create`` that isolate one run (hardening and limits).

    ``runtime`` (e.g. ``runsc``) is passed through to the engine when given.
    """
    tmpfs = tmpfs_bytes(limits)
    memory = container_memory_bytes(limits)
    cpu = max(1, int(limits.cpu_seconds))
    return {
        **({"runtime": runtime} if runtime else {}),
        "network_mode": "none",
        "read_only": True,
        "user": NOBODY,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "pids_limit": int(limits.max_processes),
        "mem_limit": memory,
        "memswap_limit": memory,
        "nano_cpus": int(CPUS * 1e9),
        "tmpfs": {"/tmp": f"rw,noexec,nosuid,nodev,size={tmpfs},mode=1777"},
        "mounts": [Mount(target=INPUT_DIR, source=input_dir, type="bind", read_only=True)],
        "ulimits": [
            Ulimit(name="cpu", soft=cpu, hard=cpu + 1),
            Ulimit(name="nofile", soft=limits.max_open_files, hard=limits.max_open_files),
            Ulimit(name="fsize", soft=limits.file_size_bytes, hard=limits.file_size_bytes),
            Ulimit(name="core", soft=0, hard=0),
        ],
        "init": True,
        "ipc_mode": "private",
        "environment": _environment(),
        "working_dir": "/tmp",
        "hostname": "sandbox",
        "log_config": LogConfig(type="json-file", config={"max-size": LOG_MAX_SIZE, "max-file": "1"}),
        "stdin_open": False,
        "tty": False,
        "detach": True,
    }


class _StreamPump(threading.Thread):
    """Drain the attach stream (``(stdout, stderr)`` chunks) into capped buffers.

    ``wake`` is set when the stream ends (the container exited) or when the output ran so far past
    its cap that the host should kill the container (``overflow`` then says why).
    """

    def __init__(self, stream, limits: Limits, timeline: CpuTimeline | None = None):
        super().__init__(daemon=True, name="docker-sandbox-pump")
        self.timeline = timeline  # sampled after each result chunk (the host's CPU-time observation)
        self.stream = stream
        self.results = CappedBuffer(limits.result_bytes)
        self.output = CappedBuffer(limits.output_bytes)
        self.output_kill = limits.output_bytes * OUTPUT_KILL_FACTOR
        self.overflow: str | None = None
        self.error: BaseException | None = None
        self.ended = threading.Event()
        self.wake = threading.Event()

    def run(self) -> None:  # noqa: D102
        try:
            for out, err in self.stream:
                if out:
                    self.results.feed(out)
                    if self.timeline is not None:
                        self.timeline.sample(self.results.total)
                if err:
                    self.output.feed(err)
                if self.overflow is None:
                    if self.results.total > self.results.cap:
                        self.overflow = f"the result channel passed its cap of {self.results.cap} bytes"
                    elif self.output.total > self.output_kill:
                        self.overflow = f"the submission wrote more than {self.output_kill} bytes of output"
                    if self.overflow:
                        self.wake.set()
        except Exception as exc:  # noqa: BLE001 - reported to the host thread, which decides
            self.error = exc
        finally:
            self.ended.set()
            self.wake.set()


class _TerminateRequested(SystemExit):
    """SIGTERM arrived while a container ran: unwind (removing the container), then exit 143."""

    def __init__(self):
        super().__init__(128 + signal.SIGTERM)


def _on_sigterm(signum, frame):
    raise _TerminateRequested()


class _SigtermUnwinds:
    """While active (main thread only, and only over the default disposition), SIGTERM raises."""

    def __enter__(self):
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
                self.previous = signal.signal(signal.SIGTERM, _on_sigterm)
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)
        return False


def _remove(container) -> None:
    """Kill and remove ``container``; a container that is already gone is fine."""
    try:
        container.remove(force=True)
    except NotFound:
        pass
    finally:
        with _ACTIVE_LOCK:
            _ACTIVE.pop(container.id, None)


@atexit.register
def _remove_active_at_exit() -> None:
    with _ACTIVE_LOCK:
        leftovers = list(_ACTIVE.values())
    for container in leftovers:
        try:
            _remove(container)
        except Exception:  # noqa: BLE001 - best effort at interpreter exit; the sweep catches the rest
            pass


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _owner_gone(owner: str) -> bool:
    """Whether ``owner`` (``host:pid``) names a process of this host that no longer exists."""
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False  # another host's (or namespace's) grader: only its deadline tells
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def sweep(client, *, now: float | None = None) -> list[str]:
    """Remove containers of ours left behind by graders that died.

    A container is a leftover when its deadline label has passed, or when the grader process named
    by its owner label is gone from this host (whatever the container's state). A live grader's
    containers, running or just exited and about to be read, are left alone: several graders may
    share one engine.

    Returns:
        The names of the containers removed.
    """
    now = time.time() if now is None else now
    removed = []
    # sparse: one list call, no per-container inspect that would 404 on a container another grader
    # removes between the listing and the inspect (seen with 8 graders at once)
    for container in client.containers.list(all=True, filters={"label": CONTAINER_LABEL}, sparse=True):
        with _ACTIVE_LOCK:
            if container.id in _ACTIVE:
                continue
        labels = container.attrs.get("Labels") or {}
        try:
            deadline = float(labels.get(DEADLINE_LABEL, "0"))
        except ValueError:
            deadline = 0.0
        if deadline < now or _owner_gone(labels.get(OWNER_LABEL, "")):
            try:
                container.remove(force=True)
                removed.append((container.attrs.get("Names") or [container.id])[0].lstrip("/"))
            except (NotFound, APIError):
                pass  # removed meanwhile, or already being removed
    return removed


def _exit_code(status_code: int | None) -> int | None:
    """The runner's exit code; 129..192 (tini's "killed by signal N") become ``-N``, as subprocess has it."""
    if status_code is not None and 128 < status_code <= 128 + 64:
        return -(status_code - 128)
    return status_code


def _write_inputs(root: str, job: SandboxJob) -> str:
    """Write the job's files to ``root/input`` read-only for everyone; return that folder."""
    input_dir = os.path.join(root, "input")
    os.mkdir(input_dir)
    for name, data in job.input_files().items():
        path = os.path.join(input_dir, name)
        with open(path, "wb") as fh:
            fh.write(data)
        os.chmod(path, 0o444)
    os.chmod(input_dir, 0o555)
    os.chmod(root, 0o755)
    return input_dir


class DockerSandbox:
    """Run the runner in a fresh hardened container; see the module docstring."""

    name = "docker"

    def __init__(self, client, image, runtime: str | None = None):
        """Use ``client`` (a ``docker.DockerClient``), ``image`` (a ``docker`` Image object) and the OCI
        ``runtime`` (None: the engine's default)."""
        self.client = client
        self.image = image
        self.runtime = runtime
        self._engine: str | None = None

    @classmethod
    def if_ready(cls, image: str | None = None, runtime: str | None = None) -> tuple[DockerSandbox | None, str]:
        """The backend when an engine is reachable and the image (and the runtime asked for, by
        argument or ``$GRADER_DOCKER_RUNTIME``) are there, else None; and why."""
        name = image or image_name()
        runtime = runtime or runtime_name()
        try:
            client = docker.from_env(timeout=60)
            client.ping()
        except (DockerException, requests.RequestException, OSError) as exc:
            return None, f"no Docker engine is reachable ({_short(exc)})"
        try:
            found = client.images.get(name)
        except ImageNotFound:
            return None, f"the image {name} is not built (run `grade sandbox build`)"
        except (DockerException, requests.RequestException) as exc:
            return None, f"the engine did not answer about the image {name} ({_short(exc)})"
        if runtime:
            try:
                runtimes = client.info().get("Runtimes") or {}
            except (DockerException, requests.RequestException) as exc:
                return None, f"the engine did not answer about its runtimes ({_short(exc)})"
            if runtime not in runtimes:
                return None, (f"the runtime {runtime!r} (${RUNTIME_ENV}) is not configured in the engine "
                              f"(it has {', '.join(sorted(runtimes)) or 'none'})")
        return cls(client, found, runtime), (f"engine reachable, image {name} {found.short_id}"
                                             + (f", runtime {runtime}" if runtime else ""))

    def info(self) -> SandboxInfo:
        """Isolation in force for every run (limits are recorded beside it by the grader)."""
        if self._engine is None:
            try:
                self._engine = self.client.version().get("Version", "unknown")
            except (DockerException, requests.RequestException):
                self._engine = "unknown"
        return SandboxInfo(backend=self.name, image=self.image.id, isolation={
            "engine": f"docker {self._engine}",
            "image": (self.image.tags or [self.image.id])[0],
            "network": "none",
            "user": f"{NOBODY} (nobody)",
            "filesystem": "read-only root; inputs read-only; /tmp tmpfs noexec, sized with the memory limit",
            "capabilities": "all dropped, no-new-privileges",
            "limits": ["memory (swap equal)", "pids", f"cpu quota {CPUS:g}", "cpu seconds", "open files",
                       "file size", "wall clock (host)"],
            "init": "tini",
            "runtime": self.runtime or "engine default",
        })

    def run(self, job: SandboxJob, limits: Limits) -> SandboxRun:
        """Run ``job`` in a new container; see ``Sandbox.run``."""
        try:
            sweep(self.client)
        except (DockerException, requests.RequestException) as exc:
            raise SandboxUnavailable(f"the Docker engine is not answering: {_short(exc)}") from exc
        root = tempfile.mkdtemp(prefix="grade-docker-")
        try:
            return self._run_in(_write_inputs(root, job), limits)
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def _run_in(self, input_dir: str, limits: Limits) -> SandboxRun:
        name = f"attention-grader-{os.getpid()}-{uuid.uuid4().hex[:10]}"
        deadline = time.time() + limits.wall_seconds + SWEEP_GRACE_S
        command = ["python", "-I", "-B", f"{INPUT_DIR}/runner.py", INPUT_DIR]
        with _SigtermUnwinds():
            try:
                container = self.client.containers.create(
                    self.image.id, command, name=name,
                    labels={CONTAINER_LABEL: "1", DEADLINE_LABEL: f"{deadline:.0f}", OWNER_LABEL: _owner()},
                    **container_options(limits, input_dir, self.runtime))
            except ImageNotFound as exc:
                raise SandboxUnavailable(f"the image {self.image.id} is gone: {_short(exc)}") from exc
            except (DockerException, requests.RequestException) as exc:
                raise SandboxUnavailable(f"the engine could not create a container: {_short(exc)}") from exc
            with _ACTIVE_LOCK:
                _ACTIVE[container.id] = container
            try:
                return self._attend(container, limits)
            except (DockerException, requests.RequestException) as exc:
                raise SandboxUnavailable(f"the engine failed during the run: {_short(exc)}") from exc
            finally:
                _remove(container)

    def _attend(self, container, limits: Limits) -> SandboxRun:
        """Start ``container``, stream its output until it exits or must be killed, report."""
        stream = container.attach(stdout=True, stderr=True, stream=True, logs=True, demux=True)
        timeline = CpuTimeline(cgroup_cpu_source(container.id))
        pump = _StreamPump(stream, limits, timeline)
        pump.start()
        try:
            container.start()
            start = time.monotonic()
            end = start + limits.wall_seconds
            timed_out = False
            while not pump.ended.is_set() and pump.overflow is None:
                left = end - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                pump.wake.wait(left)
            if timed_out or pump.overflow is not None:
                try:
                    container.kill()
                except APIError:
                    pass  # it exited between the deadline and the kill (409 Conflict)
            try:
                status = container.wait(timeout=KILL_GRACE_S)
            except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError) as exc:
                raise SandboxUnavailable(f"the container did not stop within {KILL_GRACE_S:g} s of its end") from exc
            wall = time.monotonic() - start
            drained = pump.ended.wait(KILL_GRACE_S)
        finally:
            stream.close()
        if not drained:
            raise SandboxUnavailable(f"the output stream did not end within {KILL_GRACE_S:g} s of the container")
        if pump.error is not None:
            raise SandboxUnavailable(f"reading the container's output failed: {_short(pump.error)}")
        container.reload()
        state = container.attrs.get("State", {})
        exit_code = _exit_code(status.get("StatusCode"))
        if exit_code == -signal.SIGXCPU:  # the cpu-seconds rlimit
            timed_out = True
        output = display_text(pump.output.data)
        results = decode_stream(pump.results.data, truncated=pump.results.truncated)
        attach_observed_cpu(results, timeline)
        return SandboxRun(
            results=results,
            exit_code=exit_code,
            timed_out=timed_out,
            oom_killed=bool(state.get("OOMKilled")),
            output=output,
            output_truncated=pump.output.truncated,
            wall_seconds=wall,
            stopped=pump.overflow,
        )
