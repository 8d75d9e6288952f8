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
are checked before anything is loaded). The stream is the attach socket (stdin, stdout, stderr),
attached before the container starts; stdin carries the frame handshake's acknowledgements
(``grader.sandbox.observe``: the host reads the container's memory cgroup at exact frame boundaries
around each measured step), sent non-blocking (``SocketAcks``), and the container is created with
stdin open and the engine's ``StdinOnce``, so the runner reads end of file once the host's
connection closes. The host owns the wall clock: at the deadline (with the load
allowance of ``grader.sandbox.deadline``, from the container's cgroup CPU time: a container starved
of CPU by a loaded host is not charged a timeout), or when the output runs far past its cap, the
container is killed; it is removed in a ``finally`` (also on
Ctrl-C, SIGTERM and grader exceptions), and leftovers of crashed graders are swept by label.

Warm containers (``start_warm``/``run_warm``, used by ``grader.sandbox.pool.WarmPool``): the same
container, created with the same ``container_options`` and started ahead of its job as
``runner.py --wait numpy|torch --sync INPUT_DIR``, its runtime imported and blocked reading its stdin
(``stdin_open``, with the engine's ``StdinOnce``: when the grader's attach connection closes, even by
a ``kill -9``, the runner reads end of file and exits without running anything). The input folder is
bind-mounted read-only from a host folder that holds only the runner until the host writes the
job's files into it and then ``go`` on the attach socket. The results are read from that socket
through the same capped pump and decoded the same way; the runner's ready line is taken off the
result channel before it. One container per job, removed after its run; its deadline label covers
``WARM_MAX_WAIT_S`` of waiting (the pool retires older ones), so no sweep takes a container that
waits legitimately, and a dead grader's containers are swept by owner as cold ones are.
"""

from __future__ import annotations

import atexit
import logging
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
from docker.utils.socket import STDERR, STDOUT, frames_iter

from grader.run.channel import decode_stream, display_text
from grader.run.runner import READY_LINE, SYNC_FLAG
from grader.sandbox.base import (INSTRUMENTS_PATH, RUNNER_PATH, CappedBuffer, Limits, SandboxInfo, SandboxJob,
                                 SandboxRun, SandboxUnavailable, sweep_orphan_folders)
from grader.sandbox.deadline import BACKSTOP_FACTOR, wait_for_run
from grader.sandbox.image import CONTAINER_LABEL, image_name
from grader.sandbox.observe import CpuTimeline, FrameSync, attach_observed, cgroup_cpu_source, cgroup_memory_watch

log = logging.getLogger("grader.sandbox.docker")

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
#: Seconds added to a run's longest wall clock (its limit times the load allowance's backstop)
#: before a container of ours counts as a leftover.
SWEEP_GRACE_S = 120.0
#: Largest json-file log the engine keeps per container (we never read it: we stream).
LOG_MAX_SIZE = "1m"
#: Environment variable naming the OCI runtime containers run under, e.g. ``runsc`` (gVisor), which
#: must be configured in the engine; unset: the engine's default (``runc``). See SECURITY.md.
RUNTIME_ENV = "GRADER_DOCKER_RUNTIME"

#: Seconds a warm container may wait for its job before the pool retires it (``WarmContainer.alive``);
#: its deadline label adds this to the run's wall limit and the sweep grace.
WARM_MAX_WAIT_S = 900.0
#: Folder-name prefix of warm containers' input folders: ``grade-docker-warm-<grader pid>-...``.
WARM_PREFIX = "grade-docker-warm-"

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
    """Keyword arguments of ``containers.create`` that isolate one run (hardening and limits), the
    same for cold and warm containers.

    ``runtime`` (e.g. ``runsc``) is passed through to the engine when given. Stdin is kept open for
    the host's ``go`` line (warm) and the frame handshake's acknowledgements, with ``StdinOnce`` (the
    SDK sets it when ``detach`` is False at creation), so the runner reads end of file once the
    grader's attach connection closes.
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
        "stdin_open": True,
        "tty": False,
        "detach": False,
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
                        self.timeline.arrived(out, self.results.total)
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


#: Background removals of warm containers whose run has been read (``WarmContainer.discard``).
_REMOVALS: set[threading.Thread] = set()


def wait_removals(timeout: float = 2 * KILL_GRACE_S) -> None:
    """Wait (at most ``timeout`` seconds in all) for the background removals started so far."""
    deadline = time.monotonic() + timeout
    with _ACTIVE_LOCK:
        pending = list(_REMOVALS)
    for thread in pending:
        thread.join(max(0.0, deadline - time.monotonic()))


@atexit.register
def _remove_active_at_exit() -> None:
    wait_removals()
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
        #: why ``if_ready`` found it ready (reused as the selection's reason while a pool holds it)
        self.ready_reason = "engine reachable"

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
        backend = cls(client, found, runtime)
        backend.ready_reason = (f"engine reachable, image {name} {found.short_id}"
                                + (f", runtime {runtime}" if runtime else ""))
        return backend, backend.ready_reason

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

    def _create(self, runner_args: list[str], input_dir: str, limits: Limits, *, waits_s: float):
        """Create (not start) one labelled container of ours running ``runner.py [runner_args]
        INPUT_DIR`` with ``container_options`` (``waits_s`` > 0: a warm container, stdin open, that may
        wait that many seconds for its job before its deadline label counts it as a leftover), and
        record it in ``_ACTIVE``.

        Raises:
            SandboxUnavailable: the image is gone.
            DockerException, requests.RequestException: the engine failed (the caller words it).
        """
        warm = waits_s > 0
        name = f"attention-grader-{os.getpid()}-{'warm-' if warm else ''}{uuid.uuid4().hex[:10]}"
        deadline = time.time() + waits_s + limits.wall_seconds * BACKSTOP_FACTOR + SWEEP_GRACE_S
        command = ["python", "-I", "-B", f"{INPUT_DIR}/runner.py", *runner_args, INPUT_DIR]
        try:
            container = self.client.containers.create(
                self.image.id, command, name=name,
                labels={CONTAINER_LABEL: "1", DEADLINE_LABEL: f"{deadline:.0f}", OWNER_LABEL: _owner()},
                **container_options(limits, input_dir, self.runtime))
        except ImageNotFound as exc:
            raise SandboxUnavailable(f"the image {self.image.id} is gone: {_short(exc)}") from exc
        with _ACTIVE_LOCK:
            _ACTIVE[container.id] = container
        return container

    def _run_in(self, input_dir: str, limits: Limits) -> SandboxRun:
        with _SigtermUnwinds():
            try:
                container = self._create([SYNC_FLAG], input_dir, limits, waits_s=0.0)
            except (DockerException, requests.RequestException) as exc:
                raise SandboxUnavailable(f"the engine could not create a container: {_short(exc)}") from exc
            try:
                return self._attend(container, limits)
            except (DockerException, requests.RequestException) as exc:
                raise SandboxUnavailable(f"the engine failed during the run: {_short(exc)}") from exc
            finally:
                _remove(container)

    def _attend(self, container, limits: Limits) -> SandboxRun:
        """Attach to ``container`` (stdin for the handshake, stdout and stderr), start it, stream its
        output until it exits or must be killed, report."""
        sock = self.client.api.attach_socket(container.id, params={"stdin": 1, "stdout": 1, "stderr": 1,
                                                                   "stream": 1})
        acks = SocketAcks(sock)
        acks.raw.settimeout(None)  # the host's wall clock (``_watch``) bounds the run, not the socket
        pump = _StreamPump(_demux(sock), limits, _timeline(container.id, acks))
        pump.start()
        try:
            container.start()
            return self._watch(container, pump, limits, time.monotonic())
        finally:
            acks.close()

    def _watch(self, container, pump: _StreamPump, limits: Limits, start: float) -> SandboxRun:
        """Wait (from ``start``, ``time.monotonic()`` seconds) until ``container`` exits or must be
        killed (wall clock, output past its cap), then decode what ``pump`` read; the caller closes
        the stream. Shared by cold and warm runs, so both read results the same way.

        Raises:
            SandboxUnavailable: the container did not stop, or its stream did not end, within
                ``KILL_GRACE_S`` of the end; the stream failed.
        """
        def finished(timeout: float) -> bool:
            pump.wake.wait(timeout)
            return pump.ended.is_set() or pump.overflow is not None

        # the wall-clock limit, with the process backend's allowance while the container computes on
        # a loaded host (its CPU seconds from the cgroup, read by the host; unreadable: no allowance)
        cpu_source = pump.timeline.source or (lambda: None)
        timed_out = wait_for_run(finished, cpu_source, limits.wall_seconds, float(limits.cpu_seconds), start)
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
        attach_observed(results, pump.timeline)
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

    # -- warm containers (grader.sandbox.pool) ----------------------------------------------------

    def sweep_warm_folders(self, tmp: str | None = None) -> list[str]:
        """Remove what graders that died left of their warm containers: the containers (``sweep``:
        owner gone or deadline passed; a killed grader's exited on end of file) and the host input
        folders of graders whose process is gone. Called by ``WarmPool`` at its start; an engine
        that does not answer is left to the next sweep. Returns the folders removed."""
        try:
            sweep(self.client)
        except (DockerException, requests.RequestException) as exc:
            log.warning("sweep of leftover containers failed: %s", _short(exc))
        return sweep_orphan_folders(WARM_PREFIX, tmp)

    def start_warm(self, runtime: str, limits: Limits) -> WarmContainer:
        """Create and start a container ahead of its job: ``container_options(limits, ...)`` as a cold
        run has them (stdin open, ``StdinOnce``), running ``runner.py --wait RUNTIME --sync
        INPUT_DIR`` (``runtime``: ``numpy`` or ``torch``, imported while it waits), attached
        through one socket (stdin in, stdout/stderr out) whose pump runs from the start. Give it
        exactly one job with ``run_warm``, or ``discard`` it.

        Raises:
            SandboxUnavailable: the engine cannot create, attach or start the container.
            ValueError: an unknown runtime.
        """
        if runtime not in ("numpy", "torch"):
            raise ValueError(f"unknown runtime {runtime!r}")
        try:
            sweep(self.client)
        except (DockerException, requests.RequestException) as exc:
            raise SandboxUnavailable(f"the Docker engine is not answering: {_short(exc)}") from exc
        root = tempfile.mkdtemp(prefix=f"{WARM_PREFIX}{os.getpid()}-")
        container = None
        try:
            input_dir = os.path.join(root, "input")
            os.mkdir(input_dir)
            os.chmod(root, 0o755)
            os.chmod(input_dir, 0o755)  # the host adds the job later; the container's mount is read-only
            for name, path in (("runner.py", RUNNER_PATH), ("instruments.py", INSTRUMENTS_PATH)):
                _write_readonly(os.path.join(input_dir, name), path.read_bytes())
            container = self._create(["--wait", runtime, SYNC_FLAG], input_dir, limits, waits_s=WARM_MAX_WAIT_S)
            sock = self.client.api.attach_socket(container.id, params={
                "stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
            raw = getattr(sock, "_sock", sock)
            raw.settimeout(None)  # it may wait for its job for WARM_MAX_WAIT_S
            warm = WarmContainer(container, sock, root, limits, runtime)
            warm.pump.start()
            container.start()
            return warm
        except (DockerException, requests.RequestException, OSError) as exc:
            if container is not None:
                _remove(container)
            shutil.rmtree(root, ignore_errors=True)
            raise SandboxUnavailable(f"the engine could not start a warm container: {_short(exc)}") from exc
        except BaseException:
            if container is not None:
                _remove(container)
            shutil.rmtree(root, ignore_errors=True)
            raise

    def run_warm(self, warm: WarmContainer, job: SandboxJob) -> SandboxRun:
        """Give ``warm`` its one job and attend the run (``Sandbox.run``'s contract; the wall clock
        counts from the job's delivery). The job's files are written into the container's input
        folder (read-only, like a cold run's), then ``go`` goes to its stdin. The container and its
        folder are gone afterwards, whatever happened.

        Returns:
            The run; an ``infrastructure_error`` run (nothing started) when the container had ended
            before its job arrived (``PooledSandbox`` then runs the job cold).
        Raises:
            RuntimeError: ``warm`` was given a job before.
            SandboxUnavailable: the engine failed during the run.
        """
        with _SigtermUnwinds():
            try:
                if warm.used:
                    raise RuntimeError("a warm sandbox runs one job only")
                warm.used = True
                input_dir = os.path.join(warm.root, "input")
                for name, data in job.input_files().items():
                    if name not in ("runner.py", "instruments.py"):
                        _write_readonly(os.path.join(input_dir, name), data)
                os.chmod(input_dir, 0o555)
                if warm.pump.ended.is_set():
                    return _ended_before_job("its stream had ended")
                start = time.monotonic()
                try:
                    warm.raw.sendall(b"go\n")
                except OSError as exc:
                    return _ended_before_job(type(exc).__name__)
                try:
                    return self._watch(warm.container, warm.pump, warm.limits, start)
                except (DockerException, requests.RequestException) as exc:
                    raise SandboxUnavailable(f"the engine failed during the run: {_short(exc)}") from exc
            finally:
                # the run has been read: the container (stopped by now) is removed in the background,
                # which saves the caller the engine's removal (0.05-0.5 s per run on a loaded machine)
                warm.discard(background=True)

    @staticmethod
    def wait_removals(timeout: float = 2 * KILL_GRACE_S) -> None:
        """See the module function ``wait_removals`` (``WarmPool.close`` calls it)."""
        wait_removals(timeout)


def _ended_before_job(why: str) -> SandboxRun:
    return SandboxRun(results=decode_stream(b""),
                      infrastructure_error=f"the warm container had ended before its job arrived ({why})")


def _write_readonly(path: str, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
    os.chmod(path, 0o444)


class SocketAcks:
    """An attach socket's stdin half, for the frame handshake's acknowledgements
    (``observe.FrameSync``): each sent without blocking (a runner that never reads cannot stall the
    host's reader; one that does not fit is dropped); closed once, under a lock, with the socket.

    Attributes:
        sock, raw: the SDK's socket wrapper and the socket under it.
    """

    def __init__(self, sock):
        self.sock, self.raw = sock, getattr(sock, "_sock", sock)
        self._lock = threading.Lock()
        self._closed = False

    def send(self, data: bytes) -> None:
        """Send ``data`` if it fits now; drop it otherwise (never raises)."""
        with self._lock:
            if self._closed:
                return
            try:
                self.raw.send(data, socket.MSG_DONTWAIT)
            except OSError:  # full (the runner does not read), or the connection is gone
                pass

    def close(self) -> None:
        """Close the socket (idempotent): the container's stdin reads end of file (``StdinOnce``)."""
        with self._lock:
            self._closed = True
            for closing in (self.raw.close, self.sock.close):
                try:
                    closing()
                except OSError:
                    pass


def _timeline(container_id: str, acks: SocketAcks) -> CpuTimeline:
    """The host's observation of a container (cgroup CPU time and memory), acknowledging frames on
    its stdin."""
    return CpuTimeline(cgroup_cpu_source(container_id), memory=cgroup_memory_watch(container_id),
                       sync=FrameSync(acks.send))


def _demux(sock):
    """``(stdout, stderr)`` chunks of an attach socket's multiplexed stream (no tty)."""
    for stream_id, data in frames_iter(sock, False):
        if stream_id == STDOUT:
            yield data, None
        elif stream_id == STDERR:
            yield None, data


class WarmContainer:
    """A container started ahead of its one job (``DockerSandbox.start_warm``).

    Attributes:
        container: the ``docker`` Container (labelled, hardened, as a cold run's).
        sock, raw: the attach socket (SDK wrapper, and the socket under it, written ``go`` to).
        root: the host folder whose ``input/`` is bind-mounted read-only at ``INPUT_DIR``.
        limits: the limits it was created with (a job needs equal limits).
        runtime: ``numpy`` or ``torch``: what it imported while waiting.
        pump: drains the attach socket from the start (the result channel after the ready line).
        ready: set once the runner wrote ``READY_LINE`` (its runtime is imported and it waits).
        used: it was given its job (never given another).
    """

    def __init__(self, container, sock, root: str, limits: Limits, runtime: str):
        self.container, self.sock, self.root, self.limits, self.runtime = container, sock, root, limits, runtime
        self.acks = SocketAcks(sock)
        self.raw = self.acks.raw
        self.used = False
        self.started = time.monotonic()
        self.ready = threading.Event()
        self._discarded = False
        self._lock = threading.Lock()
        self.pump = _StreamPump(self._chunks(), limits, _timeline(container.id, self.acks))

    def _chunks(self):
        """The socket's chunks with the runner's ready line taken off the front of stdout (anything
        else there, e.g. an import failure's bytes, is kept for the record)."""
        head: bytes | None = b""
        for out, err in _demux(self.sock):
            if out and head is not None:
                head += out
                if len(head) < len(READY_LINE) and READY_LINE.startswith(head):
                    continue
                if head.startswith(READY_LINE):
                    self.ready.set()
                    out = head[len(READY_LINE):]
                else:
                    out = head
                head = None
            if out or err:
                yield out, err

    def alive(self) -> bool:
        """Still waiting for a job: not used, its stream open, and younger than ``WARM_MAX_WAIT_S``
        (past that its deadline label nears; the pool discards it and starts another)."""
        return (not self.used and not self.pump.ended.is_set()
                and time.monotonic() - self.started < WARM_MAX_WAIT_S)

    def discard(self, background: bool = False) -> None:
        """Remove the container (killing it), close the socket, remove the folder (idempotent).

        ``background``: do it in a daemon thread (``wait_removals`` waits for those; whatever is
        still there at exit is removed by this module's exit handler, or else by the label sweep).
        """
        with self._lock:
            if self._discarded:
                return
            self._discarded = True
        if not background:
            self._discard()
            return
        thread = threading.Thread(target=self._discard, daemon=True, name="docker-warm-removal")
        with _ACTIVE_LOCK:
            _REMOVALS.add(thread)
        thread.start()

    def _discard(self) -> None:
        try:
            _remove(self.container)
        except (DockerException, requests.RequestException):
            pass  # the sweep removes it (owner gone or deadline passed)
        finally:
            self.acks.close()
            self.pump.join(timeout=KILL_GRACE_S)
            shutil.rmtree(self.root, ignore_errors=True)
            with _ACTIVE_LOCK:
                _REMOVALS.discard(threading.current_thread())
