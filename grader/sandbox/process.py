"""The ``process`` backend: the runner in a child process with rlimits, in a box of its own (the embedded default).

Each run starts ``grader/sandbox/launch.py`` (a fresh process), which sets the run up and starts the
runner. Where the grader runs as root, every run gets a box (after ioi/isolate, see ``launch.py``):
its own uid (``BOX_UID_BASE + id``, one box id per concurrent run from ``BoxAllocator``), its own
PID, IPC, UTS, mount and network namespaces, a root of its own holding only the system folders, the
interpreter and the run's folder (at ``BOX_DIR``; ``input/`` read-only, ``scratch/`` the box's),
private size-capped tmpfs over ``/tmp``, ``/var/tmp``, ``/run``, ``/run/lock`` and ``/dev/shm``, no
kernel keyrings (a seccomp filter: they outlive every namespace), and nothing it started outlives it (the PID namespace's init exits with the runner; whatever still runs
as the box's uid is killed before the id is free again). Where that is not allowed, the box uid
alone; where the grader is not root, a user and network namespace where the kernel allows it (no
network, the invoking user). Always: rlimits on CPU seconds, address space, file size, open files and
processes; a scrubbed environment; its own session (killed as a group). ``Sandbox.info().isolation``
names every protection (``PROTECTIONS``) and those missing here; ``grade serve`` refuses a box that
misses one unless told ``--insecure-sandbox``; ``--require-isolation`` refuses this backend (it
shares the host's kernel: docker is the isolation for untrusted code).

The runner's stdin is a pipe from the host (``AckPipe``): a warm runner's ``go`` line, then the frame
handshake's acknowledgements (``grader.sandbox.observe``); the runner keeps it on a private
descriptor and gives the submission ``/dev/null`` as stdin.
"""

from __future__ import annotations

import fcntl
import functools
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from grader.run.channel import decode_stream, display_text
from grader.run.runner import READY_LINE, SYNC_FLAG, _step_device
from grader.sandbox.base import (INSTRUMENTS_PATH, RUNNER_PATH, CappedBuffer, Limits, SandboxInfo, SandboxJob,
                                 SandboxRun, SandboxUnavailable, sweep_orphan_folders)
from grader.sandbox.deadline import wait_for_run
from grader.sandbox.observe import (CpuTimeline, FrameSync, attach_observed, process_memory_watch,
                                    process_tree_cpu_seconds)

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


#: The box uids: ``BOX_UID_BASE + i`` for box ``i`` of ``BOX_COUNT`` (ioi/isolate's default range; no
#: host account uses it here). The gid is the uid. Overridable for hosts where the range is taken.
BOX_UID_BASE = int(os.environ.get("GRADER_BOX_UID_BASE", "60000"))
BOX_COUNT = int(os.environ.get("GRADER_BOX_COUNT", "1000"))
#: What a box must have for interview mode (``Sandbox.info().isolation["protections"]``): the keys of
#: ``missing`` when one is not in force here. See ``launch.py`` for how each is made.
PROTECTIONS = {
    "own_uid": "a uid of its own per run (not root, not shared with any other run)",
    "pid_namespace": "its own PID namespace: no other process visible, all killed when the run ends",
    "ipc_namespace": "its own IPC namespace: no System V or POSIX IPC object shared with anyone",
    "mount_namespace": "its own root: nothing of the host but system folders, the interpreter and its inputs",
    "network_namespace": "its own network namespace: no network",
    "uts_namespace": "its own host name",
    "private_tmp": "private size-capped tmpfs over /tmp, /var/tmp, /run, /run/lock, /dev/shm",
    "no_keyrings": "the kernel keyrings refused (seccomp): a uid's keyrings outlive every namespace",
}


@dataclass
class Box:
    """One box id held by a run: uid and gid ``BOX_UID_BASE + id``, locked until ``release``.

    Attributes:
        id: the box number (``0 <= id < count``).
        uid, gid: the box's user and group ids on the host.
    """

    id: int
    uid: int
    gid: int
    _fd: int | None = None

    def release(self, *, kill: bool = True) -> None:
        """Kill every process left with the box's uid (``kill``, and only when the grader is root: a
        box without a PID namespace may leave some), then unlock the id (idempotent)."""
        if kill and os.geteuid() == 0:
            kill_uid(self.uid)
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # releases the flock


def kill_uid(uid: int, rounds: int = 50) -> int:
    """SIGKILL every live process whose real uid is ``uid`` (zombies are dead already), repeating until
    none is left or after ``rounds`` scans of ``/proc`` (a forking process is caught on a later scan).
    Returns how many signals were sent."""
    sent, want = 0, b"\nUid:\t%d\t" % uid
    for _ in range(rounds):
        found = 0
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:  # the head of status holds State and Uid (real uid first); one small read
                fd = os.open(f"/proc/{name}/status", os.O_RDONLY)
                try:
                    head = os.read(fd, 1024)
                finally:
                    os.close(fd)
                if want not in head or b"\nState:\tZ" in head:
                    continue
                os.kill(int(name), signal.SIGKILL)
                found += 1
            except OSError:
                continue
        sent += found
        if not found:
            break
        time.sleep(0.01)
    return sent


class BoxAllocator:
    """Hands out box ids, one per concurrent run, safely across threads and processes: box ``i`` is
    held while its lock file ``<folder>/<i>.lock`` is ``flock``ed (per open file description, so two
    threads of one process exclude each other too; a killed grader's locks go with its descriptors).

    Args:
        folder: where the lock files live (default ``/run/grade-boxes`` for root, else a folder of
            this user in the temporary folder); made 0700.
        base: the uid of box 0.
        count: how many boxes there are (concurrent runs beyond it raise ``SandboxUnavailable``).
    """

    def __init__(self, folder: str | None = None, base: int = BOX_UID_BASE, count: int = BOX_COUNT):
        if folder is None:
            folder = ("/run/grade-boxes" if os.geteuid() == 0 and os.access("/run", os.W_OK)
                      else os.path.join(tempfile.gettempdir(), f"grade-boxes-{os.geteuid()}"))
        self.folder, self.base, self.count = folder, int(base), int(count)
        self._next = 0
        self._lock = threading.Lock()

    def acquire(self) -> Box:
        """Lock the next free box (ids are tried round-robin from the last one given, so a released
        uid is not the very next one handed out; an id that a host user or group has is skipped).

        Raises:
            SandboxUnavailable: every box is in use, or the lock folder cannot be made.
        """
        try:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            os.chmod(self.folder, 0o700)
        except OSError as exc:
            raise SandboxUnavailable(f"cannot make the box lock folder {self.folder}: {exc}") from exc
        with self._lock:
            start = self._next
        for k in range(self.count):
            i = (start + k) % self.count
            if _account_exists(self.base + i):  # a host account's uid or gid is never a box's
                continue
            fd = os.open(os.path.join(self.folder, f"{i}.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            with self._lock:
                self._next = i + 1
            return Box(id=i, uid=self.base + i, gid=self.base + i, _fd=fd)
        raise SandboxUnavailable(f"all {self.count} process-sandbox boxes are in use ({self.folder})")


@functools.lru_cache(maxsize=4096)
def _account_exists(uid: int) -> bool:
    """A user or group of the host has this id (``/etc/passwd``, ``/etc/group`` or NSS)."""
    import grp  # noqa: PLC0415
    import pwd  # noqa: PLC0415

    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
            return True
        except KeyError:
            pass
    return False


_ALLOCATOR: BoxAllocator | None = None


def allocator() -> BoxAllocator:
    """This process's ``BoxAllocator`` (made on first use)."""
    global _ALLOCATOR  # noqa: PLW0603 - one allocator per process; the locks make it safe across processes
    if _ALLOCATOR is None:
        _ALLOCATOR = BoxAllocator()
    return _ALLOCATOR


PROBE_PROGRAM = """
import ctypes, errno, json, os
def keyrings_refused():
    nr = {'x86_64': 250, 'aarch64': 219}.get(os.uname().machine)
    if nr is None:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(nr, 0, ctypes.c_int(-4), 0) == -1 and ctypes.get_errno() == errno.EPERM
def dev(d):
    try:
        return os.stat(d).st_dev if os.access(d, os.W_OK) else None
    except OSError:
        return None
open('probe', 'w').write('ok')
print(json.dumps({'uid': os.getuid(), 'pid': os.getpid(), 'root': sorted(os.listdir('/')),
                  'keyrings_refused': keyrings_refused(),
                  'ns': {n: os.readlink('/proc/self/ns/' + n) for n in ('net', 'ipc', 'pid', 'mnt', 'uts')},
                  'writable': {d: dev(d) for d in ('/tmp', '/var/tmp', '/run', '/run/lock', '/dev/shm')}}))
"""


def _judge_probe(facts: dict, box: Box | None, cfg: dict) -> dict[str, bool]:
    """Which ``PROTECTIONS`` the probe program's ``facts`` show in force."""
    host_ns = {n: os.readlink(f"/proc/self/ns/{n}") for n in facts["ns"]}
    own = {n: facts["ns"][n] != host_ns[n] for n in host_ns}
    allowed = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "dev", "proc", "sys", "run", "tmp",
               "var"} | {p.strip(os.sep).split(os.sep)[0] for p in cfg["keep_ro"] + [cfg["box_dir"] or cfg["keep_rw"][0]]}

    def host_dev(d):
        try:
            return os.stat(d).st_dev
        except OSError:
            return None

    return {
        "own_uid": box is not None and facts["uid"] == box.uid != 0,
        "pid_namespace": own["pid"] and facts["pid"] == 2,
        "ipc_namespace": own["ipc"],
        "mount_namespace": own["mnt"] and set(facts["root"]) <= allowed,
        "network_namespace": own["net"],
        "uts_namespace": own["uts"],
        "private_tmp": all(v is not None and v != host_dev(d) for d, v in facts["writable"].items()),
        "no_keyrings": bool(facts.get("keyrings_refused")),
    }


def _probe_once(python: str, isolate: bool, drop: bool) -> tuple[dict[str, bool] | None, str]:
    """Run ``PROBE_PROGRAM`` through the launcher in one mode; ``(protections, "")`` or ``(None, why)``."""
    root = tempfile.mkdtemp(prefix="grade-process-probe-")
    box = allocator().acquire() if drop else None
    try:
        scratch = _make_run_folders(root, box, isolate)
        os.mkdir(os.path.join(root, "input"), 0o755)
        if box is not None and isolate:
            scratch = os.path.join(BOX_DIR, "scratch")
        cfg = _launch_config([python, "-I", "-S", "-c", PROBE_PROGRAM], {"PATH": "/usr/bin:/bin"}, scratch, root,
                             python, Limits(), box, isolate)
        proc = subprocess.run([python, "-I", "-S", str(LAUNCHER_PATH), json.dumps(cfg)], capture_output=True,
                              text=True, timeout=30, start_new_session=True)
        if proc.returncode != 0:
            return None, (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        facts = json.loads(proc.stdout.strip().splitlines()[-1])
        if drop and facts["uid"] == 0:
            return None, "the runner was still root"
        return _judge_probe(facts, box, cfg), ""
    except (OSError, ValueError, KeyError, IndexError, subprocess.SubprocessError, SandboxUnavailable) as exc:
        return None, str(exc)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        if box is not None:
            box.release()


@functools.lru_cache(maxsize=4)
def probe_isolation(python: str) -> dict:
    """Run ``launch.py`` with a tiny program to learn what isolation it achieves here: first a full
    box (namespaces, own root, box uid); where that fails, the box uid alone (root) or nothing.

    Returns:
        ``{"mode": "box" | "uid" | "none", "user": "box" | "root" | "invoking user",
        "protections": {name: bool} (``PROTECTIONS``), "network": bool, "why": str}``: how runs are
        launched, who the program ran as, which protections held, whether it had no network, and why
        the full box could not be made (empty when it could).
    """
    root = os.geteuid() == 0
    none = dict.fromkeys(PROTECTIONS, False)
    protections, why = _probe_once(python, True, root)
    if protections is not None and (not root or protections["own_uid"]):
        mode = "box" if root else "none"
        return {"mode": mode, "user": "box" if root else "invoking user", "protections": protections,
                "network": protections["network_namespace"], "why": why}
    if not root:  # pragma: no cover - the unprivileged launcher does not fail on a missing namespace
        return {"mode": "none", "user": "invoking user", "protections": none, "network": False, "why": why}
    uid_only, why_uid = _probe_once(python, False, True)
    if uid_only is not None and uid_only["own_uid"]:
        return {"mode": "uid", "user": "box", "protections": uid_only, "network": False, "why": why}
    return {"mode": "none", "user": "root", "protections": none, "network": False, "why": why or why_uid}


def _make_run_folders(root: str, box: Box | None, isolate: bool) -> str:
    """Make ``root`` a run folder: ``scratch/`` (the box's own, 0700) and, for a full box, ``newroot/``
    (the mount point of its root); ``root`` itself ``0750`` root and the box's group (no other box can
    enter it, even where the host's ``/tmp`` is visible). Returns the scratch folder."""
    scratch = os.path.join(root, "scratch")
    os.mkdir(scratch)
    if box is not None:
        os.chown(root, 0, box.gid)
        os.chmod(root, 0o750)
        os.chown(scratch, box.uid, box.gid)
        os.chmod(scratch, 0o700)
        if isolate:
            os.mkdir(os.path.join(root, "newroot"), 0o700)
    else:
        os.chmod(root, 0o755)
    return scratch


#: Device nodes whose presence says this host has a GPU driver (NVIDIA, or ROCm's ``kfd``).
GPU_DEVICE_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/kfd")


def gpu_host() -> bool:
    """Whether this host has a GPU driver's device nodes (known without importing torch)."""
    return any(os.path.exists(p) for p in GPU_DEVICE_NODES)


@functools.lru_cache(maxsize=1)
def cuda_torch() -> bool:
    """Whether a torch runner here loads CUDA: a GPU driver's device nodes, or a torch build with its
    CUDA libraries (``torch/lib/libtorch_cuda.so``; PyPI's default Linux wheel), found without
    importing torch. Such a build maps more address space at ``import torch`` than a memory limit
    allows under ``RLIMIT_AS`` (its import failed in the runner on a GPU machine)."""
    if gpu_host():
        return True
    spec = importlib.util.find_spec("torch")
    folders = list(spec.submodule_search_locations or []) if spec else []
    return any(os.path.exists(os.path.join(f, "lib", "libtorch_cuda.so")) for f in folders)


def job_uses_cuda(job: SandboxJob) -> bool:
    """Whether any step of ``job`` places a tensor argument on a GPU (the probes' ``device``)."""
    return any(_step_device(step) == "cuda" for step in job.plan.get("steps", []))


def _launch_config(argv: list[str], env: dict, scratch: str, root: str, python: str, limits: Limits,
                   box: Box | None, isolate: bool, cuda: bool = False) -> dict:
    """The JSON config ``launch.py`` reads (see its docstring).

    The memory limit is ``RLIMIT_AS`` (address space), except for a runner that may use CUDA
    (``cuda``: CUDA steps, or a torch runner where torch is a CUDA build, ``cuda_torch``): the CUDA
    driver reserves address space far beyond any memory limit at its first call (it fails with "out
    of memory" under ``RLIMIT_AS``), and a CUDA build of torch cannot even be imported under it, so
    that runner gets ``RLIMIT_DATA`` instead, which bounds its private writable memory (heap, NumPy
    and CPU tensor buffers; since Linux 4.7) but not shared mappings or what lives on the GPU.
    """
    memory = {"as": None, "data": int(limits.memory_bytes)} if cuda else {"as": int(limits.memory_bytes)}
    return {"argv": argv, "env": env, "cwd": scratch, "keep_rw": [root], "keep_ro": interpreter_folders(python),
            "uid": box.uid if box else None, "gid": box.gid if box else None, "isolate": isolate,
            "newroot": os.path.join(root, "newroot"), "box_dir": BOX_DIR if box and isolate else None,
            "tmpfs_bytes": 16 << 20,
            "limits": {"cpu": int(limits.cpu_seconds), **memory,
                       "fsize": int(limits.file_size_bytes), "nofile": int(limits.max_open_files),
                       "nproc": int(limits.max_processes)}}


def _nspid(pid: int) -> list[int]:
    """``NSpid`` of ``/proc/<pid>/status``: its pid in each PID namespace, the host's first ([] if gone)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"NSpid:"):
                    return [int(v) for v in line.split()[1:]]
    except (OSError, ValueError):
        pass
    return []


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(c) for c in fh.read().split()]
    except (OSError, ValueError):
        return []


def boxed_runner_pid(launcher_pid: int) -> int | None:
    """The host pid of the runner in a full box started by the launcher ``launcher_pid``: the child
    of the box's init (pid 1 in the box) that is pid 2 in the box; None until it exists."""
    for init in _children(launcher_pid):
        if _nspid(init)[-1:] == [1]:
            for child in _children(init):
                if _nspid(child)[-1:] == [2]:
                    return child
    return None


class _RunnerPid:
    """The runner's host pid, found once (it never changes: ``execve`` keeps it)."""

    def __init__(self, launcher_pid: int):
        self.launcher_pid, self.pid = launcher_pid, None

    def __call__(self) -> int | None:
        if self.pid is None:
            self.pid = boxed_runner_pid(self.launcher_pid)
        return self.pid


#: Where a full box sees its run folder (``input/``, ``scratch/``): a fixed path, as the docker
#: backend's ``/sandbox/input``, so nothing of the host's temporary paths reaches the submission.
BOX_DIR = "/sandbox"


class ProcessSandbox:
    """Run the runner as a local child process; see the module docstring for what is isolated."""

    name = "process"

    def __init__(self, python: str | None = None):
        self.python = python or sys.executable
        root = os.geteuid() == 0
        probe = probe_isolation(self.python) if os.path.exists(self.python) else {
            "mode": "none", "user": "root" if root else "invoking user", "protections": dict.fromkeys(PROTECTIONS, False),
            "network": False, "why": "no interpreter"}
        self._mode = probe["mode"]
        self._protections = dict(probe["protections"])
        self._net = probe["network"]
        self._drop_user = root and probe["user"] == "box"
        self._why = probe["why"]

    @property
    def missing(self) -> list[str]:
        """The ``PROTECTIONS`` not in force here (empty: every one is)."""
        return [name for name in PROTECTIONS if not self._protections.get(name)]

    def info(self) -> SandboxInfo:
        """Isolation actually in force on this host (as ``probe_isolation`` found it): ``protections``
        (each of ``PROTECTIONS``: in force or not) and ``missing`` (those not, with ``missing_why``)."""
        if self._drop_user:
            user = f"own uid per run ({BOX_UID_BASE}-{BOX_UID_BASE + BOX_COUNT - 1})"
        else:
            user = "root" if os.geteuid() == 0 else "invoking user"
        boxed = self._mode == "box" and self._protections.get("mount_namespace")
        missing = self.missing
        isolation = {
            "network": "none (own namespace)" if self._net else "shared with host",
            "user": user + (f" (could not drop privileges: {self._why})" if user == "root" and self._why else ""),
            "filesystem": ("own root: system folders, the interpreter and the run's folder read-only, its scratch "
                           "folder and private tmpfs over /tmp, /var/tmp, /run, /run/lock, /dev/shm writable" if boxed
                           else "host filesystem, scratch working folder"),
            "rlimits": ["cpu", "address_space", "file_size", "open_files", "processes"],
            "protections": dict(self._protections),
            "missing": missing,
        }
        if missing:
            isolation["missing_why"] = self._why or ("not available without root" if os.geteuid() != 0 else
                                                     "the kernel or the grader's privileges did not allow it")
        return SandboxInfo(backend=self.name, isolation=isolation)

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
        """Run ``job`` in a child process, in a box of its own; see ``Sandbox.run``.

        Raises:
            SandboxUnavailable: the interpreter cannot be started, or every box is in use.
        """
        box = allocator().acquire() if self._drop_user else None
        root = tempfile.mkdtemp(prefix="grade-process-")
        try:
            return self._run_in(root, job, limits, box)
        finally:
            _dispose(root, box)

    def _run_in(self, root: str, job: SandboxJob, limits: Limits, box: "Box | None") -> SandboxRun:
        input_dir = self._prepare(root, box)
        _write_job(input_dir, job)
        start = time.monotonic()
        proc, readers = self._spawn(root, limits, wait_for_job=None, box=box,
                                    cuda=job_uses_cuda(job) or (job.needs_torch and cuda_torch()))
        return self._attend(proc, readers, limits, start)

    def _prepare(self, root: str, box: "Box | None") -> str:
        """Make ``root/input`` (holding the runner; root's, read-only to the box) and ``root/scratch``
        (the box's own, ``_make_run_folders``); return the input folder."""
        _make_run_folders(root, box, self._mode == "box")
        input_dir = os.path.join(root, "input")
        os.mkdir(input_dir)
        os.chmod(input_dir, 0o755)
        for name, path in (("runner.py", RUNNER_PATH), ("instruments.py", INSTRUMENTS_PATH)):
            _write_readonly(os.path.join(input_dir, name), path.read_bytes())
        return input_dir

    def _spawn(self, root: str, limits: Limits, wait_for_job: str | None, box: "Box | None" = None,
               cuda: bool = False):
        """Start the launcher on the runner in ``root``; with ``wait_for_job`` (``numpy`` or
        ``torch``) the runner imports that runtime and blocks reading its stdin until the host has
        written the job (``runner.py --wait``). Returns ``(proc, (results_reader, output_reader))``.

        Raises:
            SandboxUnavailable: the interpreter cannot be started.
        """
        isolate = self._mode == "box" or os.geteuid() != 0
        # the runner's paths as it sees them: the box's fixed folder in a full box, else the host's
        seen = BOX_DIR if box is not None and isolate else root
        input_dir, scratch = os.path.join(seen, "input"), os.path.join(seen, "scratch")
        argv = [self.python, "-I", os.path.join(input_dir, "runner.py")]
        argv += (["--wait", wait_for_job] if wait_for_job else []) + [SYNC_FLAG, input_dir]
        cfg = _launch_config(argv, self._environment(scratch, limits), scratch, root, self.python, limits,
                             box, isolate, cuda=cuda)
        try:
            proc = subprocess.Popen([self.python, "-I", "-S", str(LAUNCHER_PATH), json.dumps(cfg)],
                                    cwd=os.path.join(root, "scratch"),
                                    env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                                    stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True, close_fds=True)
        except OSError as exc:
            raise SandboxUnavailable(f"could not start {self.python}: {exc}") from exc
        acks = AckPipe(proc.stdin)  # the go line (warm) and the frame handshake's acknowledgements
        # In a full box the runner is the launcher's grandchild (pid 2 in the box), seen under its host pid.
        runner = _RunnerPid(proc.pid) if box is not None and self._mode == "box" else proc.pid
        timeline = CpuTimeline(lambda: process_tree_cpu_seconds(proc.pid), memory=process_memory_watch(runner),
                               sync=FrameSync(acks.send))
        readers = (CappedReader(proc.stdout, limits.result_bytes, timeline, acks),
                   CappedReader(proc.stderr, limits.output_bytes))
        readers[1].start()
        if not wait_for_job:
            readers[0].start()
        return proc, readers

    def start_warm(self, runtime: str, limits: Limits) -> "WarmProcess":
        """Start a runner ahead of its job (the warm pool, ``grader.sandbox.pool``): a fresh launcher
        and runner in a box of its own (held until ``discard``: the same isolation as a cold run) with
        ``limits`` already in force, ``runtime`` (``numpy`` or ``torch``) imported, waiting on its stdin.
        Give it exactly one job with ``run_warm``, or ``discard`` it.

        Raises:
            SandboxUnavailable: the interpreter cannot be started, or every box is in use.
        """
        box = allocator().acquire() if self._drop_user else None
        root = tempfile.mkdtemp(prefix=f"{WARM_PREFIX}{os.getpid()}-")
        try:
            self._prepare(root, box)
            proc, readers = self._spawn(root, limits, wait_for_job=runtime, box=box,
                                        cuda=runtime == "torch" and cuda_torch())
        except BaseException:
            _dispose(root, box)
            raise
        warm = WarmProcess(root=root, proc=proc, readers=readers, limits=limits, runtime=runtime, box=box)
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


def _dispose(root: str, box: Box | None) -> None:
    """After a run: kill whatever still runs as the box's uid, remove the run folder, then free the box."""
    if box is not None and os.geteuid() == 0:
        kill_uid(box.uid)
    shutil.rmtree(root, ignore_errors=True)
    if box is not None:
        box.release(kill=False)


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
        box: the box it runs in (uid, lock), released by ``discard``; None without a box uid.
    """

    def __init__(self, root: str, proc, readers, limits: Limits, runtime: str, box: Box | None = None):
        self.root, self.proc, self.readers, self.limits, self.runtime = root, proc, readers, limits, runtime
        self.box = box
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
        box, self.box = self.box, None
        _dispose(self.root, box)
