"""Hostile: looks for the grader's secrets in the environment and /proc: variables naming seeds,
keys or the grader, other processes' command lines and environments, the host's mounts.

expect: graded
needs: box
passes: all
output-has: PROC: done
output-lacks: LEAK
"""
import os
import sys

import numpy as np

for name, value in os.environ.items():
    if name != "PYTHONHASHSEED" and any(w in name.upper() for w in ("SEED", "GRADER", "DOCKER", "KEY", "TOKEN", "SECRET", "PASSWORD", "AWS")):
        print(f"LEAK: environment {name}")
pids = [p for p in os.listdir("/proc") if p.isdigit()]
for pid in pids:
    for part in ("cmdline", "environ"):
        try:
            with open(f"/proc/{pid}/{part}", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        for word in (b"pytest", b"grade ", b"reference", b"dockerd", b"containerd", b"GRADER", b"/work"):
            if word in data:
                print(f"LEAK: /proc/{pid}/{part} mentions {word.decode()}")
if len(pids) > 8:
    print(f"LEAK: {len(pids)} processes visible")
with open("/proc/self/mountinfo") as fh:
    for line in fh:
        mount_point, fs_type = line.split()[4], line.split(" - ")[1].split()[0]
        ours = (mount_point.startswith("/run") and fs_type == "tmpfs"  # a private tmpfs (the process box's)
                or mount_point == sys.prefix and " ro," in f" {line.split()[5]},")  # the interpreter, read-only
        if mount_point.startswith(("/work", "/root", "/home", "/var/run", "/run")) and not ours or "docker.sock" in line:
            print(f"LEAK: mount {line.strip()}")
for path in ("/proc/kcore", "/proc/sysrq-trigger", "/sys/kernel/debug", "/dev/mem", "/dev/kmsg"):
    try:
        with open(path, "rb") as fh:
            fh.read(1)
        print(f"LEAK: read {path}")
    except OSError:
        pass
print(f"PROC: done ({len(pids)} processes visible)")


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
