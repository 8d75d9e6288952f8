"""Hostile: puts its own pipe, full of acknowledgements of every frame count, in place of the
runner's acknowledgement descriptor (the count, and a token it cannot know), so the runner never
waits for the host: honest answers keep their full marks, and nothing is credited beyond them (the
steps echo the wrong token: the memory probe carries an interviewer note).

expect: graded
passes: all
"""
import fcntl
import json
import os
import stat
import sys
import threading
import time

import numpy as np


def _read_ends():
    """Descriptors above 2 open for reading on a pipe or socket, lowest first: the runner's
    acknowledgement descriptor (its stdin, kept before the output capture's pipe), then the capture's."""
    found = []
    for fd in range(3, 256):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if (stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode)) and \
                fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_WRONLY:
            found.append(fd)
    return found


with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "plan.json")) as fh:
    PLAN = json.load(fh)
#: Call numbers (0-based) of the measured steps: every step of this plan is one softmax call.
MEASURED = {i for i, s in enumerate(PLAN["steps"]) if s.get("measure")}
ACK_FD = _read_ends()[0]
calls = 0
_r, _w = os.pipe()
os.dup2(_r, ACK_FD)
os.write(_w, b"".join(i.to_bytes(8, "big") + bytes(8) for i in range(1, 400)))  # count, token


def _hook(measured):
    pass


def softmax(x, axis=-1):
    global calls
    _hook(calls in MEASURED)
    calls += 1
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
