"""Hostile: privilege probes at import: setuid/setgid to root, mount, chroot, mknod, the Docker
socket, /etc/shadow, effective capabilities. Anything that works is printed as GAINED.

expect: graded
needs: box
passes: all
output-has: PRIV: done
output-lacks: GAINED
"""
import ctypes
import os
import socket
import stat

import numpy as np

libc = ctypes.CDLL(None, use_errno=True)
for name, attempt in (("setuid(0)", lambda: os.setuid(0)), ("setgid(0)", lambda: os.setgid(0)),
                      ("setgroups([0])", lambda: os.setgroups([0])), ("chroot", lambda: os.chroot("/")),
                      ("mknod", lambda: os.mknod("/tmp/mem", stat.S_IFCHR | 0o600, os.makedev(1, 1)))):
    try:
        attempt()
        print(f"PRIV: GAINED {name}")
    except (OSError, PermissionError) as exc:
        print(f"PRIV: blocked {name}: {exc.strerror}")
if os.getuid() == 0 or os.geteuid() == 0:
    print("PRIV: GAINED running as root")
os.makedirs("/tmp/mnt", exist_ok=True)
if libc.mount(b"none", b"/tmp/mnt", b"tmpfs", 0, None) == 0:
    print("PRIV: GAINED mount")
else:
    print(f"PRIV: blocked mount: errno {ctypes.get_errno()}")
for path in ("/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock"):
    try:
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(path)
        sock.sendall(b"GET /containers/json HTTP/1.0\r\n\r\n")
        print(f"PRIV: GAINED {path}: {sock.recv(64)!r}")
    except OSError as exc:
        print(f"PRIV: blocked {path}: {exc.strerror}")
for path in ("/etc/shadow", "/proc/sysrq-trigger"):
    try:
        with open(path, "rb") as fh:
            fh.read(1)
        print(f"PRIV: GAINED read {path}")
    except OSError as exc:
        print(f"PRIV: blocked {path}: {exc.strerror}")
with open("/proc/self/status") as fh:
    status = dict(line.split(":", 1) for line in fh if ":" in line)
if int(status["CapEff"].strip(), 16) != 0:
    print(f"PRIV: GAINED capabilities {status['CapEff'].strip()}")
print("PRIV: done")


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
