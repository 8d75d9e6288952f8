"""Hostile (issue 20): on each hidden case, chooses the verdict it produces from the hidden values (a
digest of its input picks: a right answer, a wrong one, an exception naming the input, a loop, an
allocation past the memory limit), to read two bits per hidden check per attempt from the verdict
kinds. The candidate view keeps one bit per hidden check: passed or not, one fixed message, no
details; the interviewer sees every verdict. Public cases are answered correctly.

expect: graded|timeout
passes: values_1d,values_nd,axes,float64,non_contiguous,large_logits,dtype_max,neg_inf_entries,all_neg_inf,dtype_preserved,input_unchanged,memory_scaling
limits: step_seconds=1.0
output-has: HIDDEN
host: hidden-inputs
"""
import hashlib
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "plan.json")) as fh:
    HIDDEN_PART = '"hidden_values' in fh.read()


def _right(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)


def softmax(x, axis=-1):
    if not HIDDEN_PART:
        return _right(x, axis)
    digest = hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()
    print("HIDDEN", digest)
    pick = int(digest, 16) % 5
    if pick == 1:
        return _right(x, axis) + 1.0
    if pick == 2:
        raise ValueError(f"hidden input {digest}: {np.ravel(x)[:8]}")
    if pick == 3:
        while True:
            pass
    if pick == 4:
        return np.ones(1 << 40)  # MemoryError, or the memory limit
    return _right(x, axis)
