"""The process backend's launcher: sets up a run's isolation, drops privileges, then execs the runner.

Run by the host as ``python -I -S launch.py CONFIG_JSON`` (a fresh single-threaded process: nothing
here runs between ``fork`` and ``exec`` of a threaded grader). Standard library only.

As root (the usual case in containers and CI), in order:

1. ``unshare(CLONE_NEWNS | CLONE_NEWNET)``: a private mount namespace and an empty network namespace
   (only a down loopback: no network). Without ``CLONE_NEWNET`` permission, the mount namespace alone.
2. Mount propagation of ``/`` made private, so nothing below leaks to the host's mounts.
3. A small ``tmpfs`` over ``/tmp``, ``/var/tmp`` and ``/dev/shm`` (the world-writable places) and over
   the top-most folder that an unprivileged user cannot traverse above the interpreter (e.g.
   ``/root`` for a pyenv Python under it), hiding everything else in it.
4. The run's folder and the interpreter's folders (prefix, site-packages) bound back at their own
   paths from file descriptors opened before step 3; the interpreter's read-only.
5. ``chdir`` to the scratch folder, rlimits, then ``setgroups([])``, ``setgid``/``setuid`` to
   ``nobody`` (65534), ``RLIMIT_NPROC`` (counted per uid), and ``execve`` of the runner.

The submission therefore runs as an unprivileged user who can write only its scratch folder (owned
by ``nobody``) and the private tmpfs mounts, and cannot reach the network. It still shares the host's
kernel, process table (it can see other processes, not signal them) and read-only view of world-
readable files: the docker backend is the isolation for untrusted code.

Not root: ``unshare(CLONE_NEWUSER | CLONE_NEWNET)`` where unprivileged user namespaces are allowed
(network off, same user), else nothing but rlimits.

CONFIG_JSON: ``{"argv", "env", "cwd", "keep_rw": [path], "keep_ro": [path], "uid", "gid",
"limits": {"cpu", "as", "fsize", "nofile", "nproc"}, "tmpfs_bytes"}``. Exit status 120-125 means
the launcher itself failed (a grader fault), with one line on stderr saying where.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import stat
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
#: Exit status of a launcher that failed before the runner started (the host reads it as a grader fault).
LAUNCH_FAILED = 121
WORLD_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    _check(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           f"mount {target}")


def hidden_ancestor(path: str) -> str | None:
    """The top-most folder above (or at) ``path`` that others cannot traverse (no ``o+x``), or None."""
    parts = os.path.realpath(path).split(os.sep)
    for i in range(2, len(parts) + 1):
        folder = os.sep.join(parts[:i]) or os.sep
        try:
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                return folder
        except OSError:
            return None
    return None


def _outermost(paths: list[str]) -> list[str]:
    """``paths`` without those inside another one of them."""
    real = sorted({os.path.realpath(p) for p in paths if os.path.isdir(p)})
    return [p for p in real if not any(p != q and p.startswith(q.rstrip(os.sep) + os.sep) for q in real)]


def _covered(path: str, covers: list[str]) -> bool:
    return any(path == c or path.startswith(c.rstrip(os.sep) + os.sep) for c in covers)


def isolate_as_root(cfg: dict) -> None:
    """Steps 1-4 of the module docstring."""
    try:
        _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWNET), "unshare")
    except OSError:
        _check(_libc.unshare(CLONE_NEWNS), "unshare(mount)")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    keep_ro, keep_rw = _outermost(cfg["keep_ro"]), _outermost(cfg["keep_rw"])
    held = {p: os.open(p, os.O_PATH | os.O_DIRECTORY) for p in keep_ro + keep_rw}
    covers = [d for d in WORLD_WRITABLE if os.path.isdir(d) and not os.path.islink(d)]
    covers += [a for a in (hidden_ancestor(p) for p in keep_ro) if a]
    covers = _outermost(covers)
    size = int(cfg.get("tmpfs_bytes", 16 << 20))
    for cover in covers:
        mode = "1777" if cover in WORLD_WRITABLE else "755"
        _mount("tmpfs", cover, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode={mode}")
    os.umask(0o022)
    for path, fd in held.items():
        if not _covered(path, covers):
            continue
        os.makedirs(path, mode=0o755, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        if path in keep_ro:
            _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    for fd in held.values():
        os.close(fd)


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


def main(argv: list[str]) -> int:
    """Set up the isolation described by the config in ``argv[0]`` and exec the runner."""
    cfg = json.loads(argv[0])
    step = "isolation"
    try:
        if os.geteuid() == 0 and cfg.get("uid") is not None:
            isolate_as_root(cfg)
        else:
            isolate_unprivileged()
        step = "limits"
        os.chdir(cfg["cwd"])
        lim = cfg["limits"]
        resource.setrlimit(resource.RLIMIT_CPU, (lim["cpu"], lim["cpu"] + 1))
        resource.setrlimit(resource.RLIMIT_AS, (lim["as"], lim["as"]))
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
        resource.setrlimit(resource.RLIMIT_NPROC, (lim["nproc"], lim["nproc"]))
        step = "exec"
        os.execve(cfg["argv"][0], cfg["argv"], cfg["env"])
    except BaseException as exc:  # noqa: BLE001 - one line for the host, never a traceback
        os.write(2, f"grader launcher failed at {step}: {type(exc).__name__}: {exc}\n".encode())
        return LAUNCH_FAILED
    return LAUNCH_FAILED  # pragma: no cover - execve does not return


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
