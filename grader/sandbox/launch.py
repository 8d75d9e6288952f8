"""The process backend's launcher: sets up a run's box (namespaces, a private root, its own uid),
then starts the runner in it.

Run by the host as ``python -I -S launch.py CONFIG_JSON`` (a fresh single-threaded process: nothing
here runs between ``fork`` and ``exec`` of a threaded grader). Standard library only; namespaces
through ``ctypes`` ``unshare(2)``, ``mount(2)`` and ``pivot_root(2)`` (Python 3.11 has no
``os.unshare``; util-linux's ``unshare --fork --pid --mount-proc`` would make the runner PID 1 of
its namespace, where signals without a handler, SIGXCPU of the CPU rlimit included, are ignored, and
nothing would reap orphans; here a small init of our own is PID 1 and the runner PID 2).

``"isolate": true`` and the grader is root (the usual case in containers and CI), in order:

1. ``unshare`` of a mount, network, IPC, UTS and PID namespace (``CLONE_NEWNS | CLONE_NEWNET |
   CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID``): no network (only a down loopback), no System V
   or POSIX IPC object of anyone else, no other process visible. ``/`` is made private, so no mount
   below reaches the host.
2. ``fork``: the child is PID 1 of the new PID namespace (the box's init; it dies with the launcher,
   ``PR_SET_PDEATHSIG``). It builds a new root on a small tmpfs: the system folders (``/usr`` and
   the ``/bin``, ``/lib*`` links), the interpreter's folders and the few ``/etc`` files the dynamic
   loader reads, all bound read-only; ``/dev`` with ``null``, ``zero``, ``full``, ``random``,
   ``urandom`` (and NVIDIA's device nodes where present); ``/sys`` read-only; a fresh ``/proc`` of
   the new PID namespace (``hidepid``: the box's init, root's, is not even visible); size-capped
   tmpfs mounts (mode 1777) over ``/tmp``, ``/var/tmp``, ``/run``, ``/run/lock`` and ``/dev/shm``;
   the run's folder at ``box_dir`` (``/sandbox``, as in the docker backend), its
   ``input/`` read-only, its ``scratch/`` a size-capped tmpfs of the box's (nothing reaches the host's
   disk).
   Then ``pivot_root`` into it and the old root detached: nothing else of the host (other runs'
   folders, the service's database, the repository, ``/root``, ``/home``) exists in the box.
3. The init forks the runner (PID 2), which sets rlimits, ``setgroups([])``, ``setgid``/``setuid``
   to the run's box uid (one per concurrent run, ``grader.sandbox.process.BoxAllocator``),
   ``PR_SET_NO_NEW_PRIVS``, a seccomp filter refusing the kernel keyrings (``deny_keyrings``), ``RLIMIT_NPROC`` (counted per uid: this run's processes only), and
   ``execve`` of the runner. The init reaps every orphan and exits when the runner does, which makes
   the kernel kill every process left in the namespace (a double-forked daemon included).
4. The launcher waits for the init, then ends as the runner did: the same exit code, or killed by
   the same signal (so the host reads ``-SIGXCPU`` as it always did).

The host sees the box's processes under their host pids (``/proc/<pid>/status`` ``NSpid`` gives
their pid in the box: 1 for the init, 2 for the runner).

``"isolate": false`` and root: no namespace, only the box uid (rlimits, ``setuid``) and the runner
exec'd in place of the launcher. Not root: ``unshare(CLONE_NEWUSER | CLONE_NEWNET)`` where
unprivileged user namespaces are allowed (network off, same user), else nothing but rlimits.

CONFIG_JSON: ``{"argv", "env", "cwd", "keep_rw": [path], "keep_ro": [path], "uid", "gid",
"isolate", "newroot", "box_dir", "limits": {"cpu", "as" | "data", "fsize", "nofile", "nproc"}, "tmpfs_bytes"}``
(``as``: ``RLIMIT_AS``; ``data``: ``RLIMIT_DATA`` instead, for a runner that may use CUDA).
Exit status 121 means the launcher itself failed (a grader fault), with one line on stderr saying
where.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import platform
import resource
import signal
import sys

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
#: ``pivot_root(2)`` has no glibc wrapper: its syscall number by machine.
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217, "riscv64": 41}
#: Exit status of a launcher that failed before the runner started (the host reads it as a grader fault).
LAUNCH_FAILED = 121
#: System folders bound read-only into the box (or re-created as the links they are on merged-/usr systems).
SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
#: What the dynamic loader and libc read in ``/etc`` (bound read-only where present); nothing else of it.
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "nsswitch.conf")
DEVICES = ("null", "zero", "full", "random", "urandom")
#: The box's private writable places besides ``/run`` (tmpfs, mode 1777; ``/run`` is one too, holding ``/run/lock``).
WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _enc(s: str | None):
    return s.encode() if s is not None else None


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(_enc(source), _enc(target), _enc(fstype), ctypes.c_ulong(flags), _enc(data)),
           f"mount {target}")


def _bind(source: str, target: str, *, readonly: bool, recursive: bool = True) -> None:
    """Bind ``source`` at ``target`` (created as a folder or an empty file like ``source``)."""
    if os.path.isdir(source):
        os.makedirs(target, mode=0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        if not os.path.exists(target):
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))
    _mount(source, target, None, MS_BIND | (MS_REC if recursive else 0))
    if readonly:
        _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _tmpfs(target: str, size: int, mode: str) -> None:
    os.makedirs(target, mode=0o755, exist_ok=True)
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode={mode}")


def _outermost(paths: list[str]) -> list[str]:
    """``paths`` without those inside another one of them."""
    real = sorted({os.path.realpath(p) for p in paths if os.path.exists(p)})
    return [p for p in real if not any(p != q and p.startswith(q.rstrip(os.sep) + os.sep) for q in real)]


def _covered(path: str, covers: list[str]) -> bool:
    return any(path == c or path.startswith(c.rstrip(os.sep) + os.sep) for c in covers)


def _pivot(new: str) -> None:
    """Make ``new`` the root and detach the old one (``pivot_root``; else move it over ``/`` and chroot)."""
    os.chdir(new)
    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is not None:
        os.mkdir(".old", 0o700)
        _check(_libc.syscall(ctypes.c_long(number), b".", b".old"), "pivot_root")
        os.chdir("/")
        _check(_libc.umount2(b"/.old", MNT_DETACH), "umount old root")
        os.rmdir("/.old")
    else:  # pragma: no cover - machines without a known syscall number
        _mount(".", "/", None, 8192)  # MS_MOVE
        os.chroot(".")
        os.chdir("/")


def build_root(cfg: dict) -> None:
    """Step 2 of the module docstring (run by the box's init, PID 1 of the new PID namespace)."""
    new = cfg["newroot"]
    size = int(cfg.get("tmpfs_bytes", 16 << 20))
    os.umask(0o022)  # whatever the grader's umask: the box's folders must be traversable by its uid
    _mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755")
    for name in SYSTEM_DIRS:
        source = "/" + name
        if os.path.islink(source):
            os.symlink(os.readlink(source), new + source)
        elif os.path.isdir(source):
            _bind(source, new + source, readonly=True)
    os.mkdir(new + "/etc", 0o755)
    for name in ETC_ENTRIES:
        if os.path.exists("/etc/" + name):
            _bind("/etc/" + name, f"{new}/etc/{name}", readonly=True)
    uid, gid = cfg["uid"], cfg["gid"]
    with open(new + "/etc/passwd", "w") as fh:  # who the box user is, for getpass and friends
        fh.write(f"root:x:0:0:root:/:/usr/sbin/nologin\nbox:x:{uid}:{gid}:box:{cfg['cwd']}:/usr/sbin/nologin\n")
    with open(new + "/etc/group", "w") as fh:
        fh.write(f"root:x:0:\nbox:x:{gid}:\n")
    os.mkdir(new + "/dev", 0o755)
    for name in DEVICES + tuple(os.path.basename(p) for p in glob.glob("/dev/nvidia*")):
        if os.path.exists("/dev/" + name):
            _bind("/dev/" + name, f"{new}/dev/{name}", readonly=False, recursive=False)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{new}/dev/{name}")
    os.mkdir(new + "/proc", 0o555)
    for options in ("hidepid=invisible", "hidepid=2", None):  # the box sees only its own uid's processes
        try:
            _mount("proc", new + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, options)
            break
        except OSError:
            if options is None:
                raise
    if os.path.isdir("/sys"):
        _bind("/sys", new + "/sys", readonly=True, recursive=False)
    _tmpfs(new + "/run", size, "1777")  # private: writable by the box as /tmp is
    for place in WRITABLE:
        _tmpfs(new + place, size, "1777")
    if os.path.islink("/var/lock"):
        os.symlink(os.readlink("/var/lock"), new + "/var/lock")
    for path in _outermost(cfg["keep_ro"]):
        if not _covered(path, ["/usr"]):
            _bind(path, new + path, readonly=True)
    box_dir = cfg.get("box_dir")
    if box_dir:  # the run's folder at a fixed path (nothing of the host's paths shows), its input read-only
        (run_folder,) = cfg["keep_rw"]
        _bind(run_folder, new + box_dir, readonly=False, recursive=False)
        _bind(os.path.join(run_folder, "input"), new + box_dir + "/input", readonly=True, recursive=False)
        _mount("tmpfs", new + box_dir + "/scratch", "tmpfs", MS_NOSUID | MS_NODEV,  # nothing reaches the host's disk
               f"size={size},mode=700,uid={cfg['uid']},gid={cfg['gid']}")
    else:
        for path in _outermost(cfg["keep_rw"]):
            _bind(path, new + path, readonly=False, recursive=False)
    _pivot(new)
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    _libc.sethostname(b"grader-box", 10)


def _unshare_box() -> None:
    """Step 1 of the module docstring. The mount and PID namespaces are required (the box's root and
    init need them); a network, IPC or UTS namespace the kernel refuses is left out (the host's probe
    then reports it missing)."""
    if _libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID) != 0:
        _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWPID), "unshare(mount, pid)")
        for optional in (CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS):
            _libc.unshare(optional)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)


def isolate_unprivileged() -> None:
    """Network off where unprivileged user namespaces are allowed (same user, nothing else)."""
    try:
        uid, gid = os.getuid(), os.getgid()
        _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNET), "unshare(user, net)")
        with open("/proc/self/setgroups", "w") as fh:
            fh.write("deny")
        with open("/proc/self/uid_map", "w") as fh:
            fh.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as fh:
            fh.write(f"{gid} {gid} 1")
    except OSError:
        pass


#: The kernel keyring syscalls (``add_key``, ``request_key``, ``keyctl``) by machine: a uid's user and
#: persistent keyrings outlive its processes and every namespace made here, so a run could leave data
#: for the next run given the same box uid; they are refused (``EPERM``), as Docker's default seccomp
#: profile refuses them.
KEYRING_SYSCALLS = {"x86_64": (0xC000003E, (248, 249, 250)), "aarch64": (0xC00000B7, (217, 218, 219))}
X32_SYSCALL_BIT = 0x40000000
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def deny_keyrings() -> bool:
    """Install a seccomp filter refusing ``KEYRING_SYSCALLS`` with ``EPERM`` (and, on x86-64, every
    x32 or foreign-architecture syscall, which a filter by number would otherwise let through). Needs
    ``PR_SET_NO_NEW_PRIVS``. Returns False on a machine without a known table (nothing installed).

    Raises:
        OSError: the kernel refused the filter.
    """
    entry = KEYRING_SYSCALLS.get(platform.machine())
    if entry is None:
        return False
    arch, numbers = entry
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
    deny = 3 + len(numbers)  # index of the deny instruction, counted from after the jump
    prog = [(ld, 0, 0, 4),  # seccomp_data.arch
            (jeq, 0, deny, arch),  # another architecture (i386 via int 0x80): denied
            (ld, 0, 0, 0),  # seccomp_data.nr
            (jge, deny - 2, 0, X32_SYSCALL_BIT)]  # the x32 ABI's numbers
    for i, number in enumerate(numbers):
        prog.append((jeq, len(numbers) - i, 0, number))
    prog += [(ret, 0, 0, SECCOMP_RET_ALLOW), (ret, 0, 0, SECCOMP_RET_ERRNO | 1)]  # EPERM
    filters = (_SockFilter * len(prog))(*(_SockFilter(*f) for f in prog))
    fprog = _SockFprog(len(prog), filters)
    _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "seccomp")
    return True


def _fail(step: str, exc: BaseException) -> int:
    os.write(2, f"grader launcher failed at {step}: {type(exc).__name__}: {exc}\n".encode())
    return LAUNCH_FAILED


def exec_runner(cfg: dict) -> int:
    """Step 3 of the module docstring: limits, the box uid, exec. Returns only on failure."""
    step = "limits"
    try:
        os.chdir(cfg["cwd"])
        lim = cfg["limits"]
        resource.setrlimit(resource.RLIMIT_CPU, (lim["cpu"], lim["cpu"] + 1))
        if lim.get("as") is not None:
            resource.setrlimit(resource.RLIMIT_AS, (lim["as"], lim["as"]))
        if lim.get("data") is not None:  # a CUDA runner: see process._launch_config
            resource.setrlimit(resource.RLIMIT_DATA, (lim["data"], lim["data"]))
        resource.setrlimit(resource.RLIMIT_FSIZE, (lim["fsize"], lim["fsize"]))
        resource.setrlimit(resource.RLIMIT_NOFILE, (lim["nofile"], lim["nofile"]))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if os.geteuid() == 0 and cfg.get("uid") is not None:
            step = "dropping privileges"
            os.setgroups([])
            os.setgid(cfg["gid"])
            os.setuid(cfg["uid"])
            if os.getuid() == 0 or os.geteuid() == 0:
                raise OSError("still root after setuid")
            _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
            step = "seccomp"
            deny_keyrings()
        resource.setrlimit(resource.RLIMIT_NPROC, (lim["nproc"], lim["nproc"]))
        step = "exec"
        os.execve(cfg["argv"][0], cfg["argv"], cfg["env"])
    except BaseException as exc:  # noqa: BLE001 - one line for the host, never a traceback
        return _fail(step, exc)
    return LAUNCH_FAILED  # pragma: no cover - execve does not return


def box_init(cfg: dict, report_fd: int) -> int:
    """PID 1 of the box: build its root, fork the runner, reap everything until the runner ends, and
    write the runner's wait status to ``report_fd`` (the launcher's pipe). Its exit kills the box."""
    try:
        _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
        build_root(cfg)
    except BaseException as exc:  # noqa: BLE001
        return _fail("building the box", exc)
    runner = os.fork()
    if runner == 0:
        os.close(report_fd)
        os._exit(exec_runner(cfg))
    status = None
    while status is None:
        try:
            pid, wait_status = os.wait()
        except ChildProcessError:  # pragma: no cover - the runner is our child until it is reaped
            break
        if pid == runner:
            status = wait_status
    os.write(report_fd, str(status if status is not None else LAUNCH_FAILED << 8).encode())
    return 0


def _end_as(wait_status: int) -> int:
    """Exit as a process with ``wait_status`` did: the same code, or killed by the same signal."""
    if os.WIFSIGNALED(wait_status):
        sig = os.WTERMSIG(wait_status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        return 128 + sig  # pragma: no cover - a signal that does not end a process (none that ends a runner)
    return os.WEXITSTATUS(wait_status)


def run_boxed(cfg: dict) -> int:
    """Steps 1-4 of the module docstring (the launcher's side)."""
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        _unshare_box()
        read_fd, write_fd = os.pipe()
    except BaseException as exc:  # noqa: BLE001
        return _fail("isolation", exc)
    init = os.fork()
    if init == 0:
        os.close(read_fd)
        os._exit(box_init(cfg, write_fd))
    os.close(write_fd)
    os.close(0)  # the box holds the runner's stdin; the launcher keeps only its report pipe
    report = b""
    while True:
        try:
            chunk = os.read(read_fd, 64)
        except InterruptedError:  # pragma: no cover
            continue
        if not chunk:
            break
        report += chunk
    _pid, init_status = os.waitpid(init, 0)
    if not report:  # the init failed before the runner ran (it said why on stderr)
        return os.WEXITSTATUS(init_status) if os.WIFEXITED(init_status) else LAUNCH_FAILED
    return _end_as(int(report))


def main(argv: list[str]) -> int:
    """Set up the box described by the config in ``argv[0]`` and run the runner in it."""
    cfg = json.loads(argv[0])
    if os.geteuid() == 0 and cfg.get("uid") is not None:
        if cfg.get("isolate"):
            return run_boxed(cfg)
    elif cfg.get("isolate"):
        isolate_unprivileged()
    return exec_runner(cfg)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
