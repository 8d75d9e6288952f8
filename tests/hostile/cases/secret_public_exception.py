"""Hostile (issue 20): every call of the first public check raises an exception whose message holds a
sha256 of every array in the input folder (hidden ones included, had they been there), so the public
check's message would carry the hidden inputs to the candidate. The public part's sandbox holds public
inputs only; in the hidden part's sandbox the same trick reaches only the interviewer.

expect: graded
passes: values_nd,axes,float64,non_contiguous,large_logits,dtype_max,neg_inf_entries,all_neg_inf,dtype_preserved,input_unchanged,memory_scaling
verdicts: error
output-has: FOLDER HOLDS
host: hidden-inputs
"""
import hashlib
import json
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "plan.json")) as fh:
    STEPS = [s["id"] for s in json.load(fh)["steps"]]
with np.load(os.path.join(here, "arrays.npz")) as npz:
    DIGESTS = [hashlib.sha256(np.ascontiguousarray(npz[k]).tobytes()).hexdigest() for k in npz.files]
HIDDEN_PART = any(s.startswith("hidden_values") for s in STEPS)
CALLS = [0]


def softmax(x, axis=-1):
    step = STEPS[CALLS[0]] if CALLS[0] < len(STEPS) else ""
    CALLS[0] += 1
    if step.startswith(("values_1d", "hidden_values")):
        print("FOLDER HOLDS", len(DIGESTS), "arrays")
        raise ValueError("FOLDER HOLDS " + " ".join(reversed(DIGESTS[-40:])))
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
