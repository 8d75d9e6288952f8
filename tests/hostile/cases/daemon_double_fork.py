"""Hostile: a double-fork daemon (new session, parent gone) that should outlive the run, then a
correct answer. The daemon keeps the output pipes open and sleeps.

expect: graded
needs: box
passes: all
"""
import os
import time

import numpy as np

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            time.sleep(1000)
    os._exit(0)
os.wait()


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
