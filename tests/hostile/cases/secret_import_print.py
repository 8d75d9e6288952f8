"""Hostile (issue 20): reads the runner's input folder while being imported and prints what it finds:
the plan and a sha256 of every input array (a hidden one too, wherever it lies). Output printed at
import is the candidate's own, so the hidden inputs must never be in the folder then: the public part
runs in a sandbox that holds public inputs only, the hidden part in a fresh one. It then answers
correctly.

expect: graded
passes: all
output-has: FOLDER HOLDS
host: hidden-inputs
"""
import hashlib
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "plan.json")) as fh:
    print("PLAN", fh.read()[:2000])
with np.load(os.path.join(here, "arrays.npz")) as npz:
    digests = [hashlib.sha256(np.ascontiguousarray(npz[k]).tobytes()).hexdigest() for k in npz.files]
# at most ~4 KiB of one step's output is kept: the digests go out in lines, the hidden ones first
print("FOLDER HOLDS", len(digests), "arrays")
for d in reversed(digests):
    print(d)


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
