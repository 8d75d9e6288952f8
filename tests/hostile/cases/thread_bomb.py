"""Hostile: starts non-daemon threads that never end until no more can start, then answers
correctly (the interpreter would wait for those threads at exit: the host's clock ends it).

expect: graded
needs: box
passes: all
output-has: THREADS: limited after
limits: wall_seconds=8 max_processes=32
"""
import threading

import numpy as np

forever = threading.Event()
started = 0
try:
    while True:
        threading.Thread(target=forever.wait).start()
        started += 1
except RuntimeError as exc:
    print(f"THREADS: limited after {started} threads: {exc}")


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
