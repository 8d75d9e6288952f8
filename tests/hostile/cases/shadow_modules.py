"""Hostile: at import, plants numpy.py, instruments.py, runner.py, torch.py and submission.py in
its working folder and its TMPDIR, each of which would print SHADOWED and break if imported, then
answers correctly (the memory probe still imports the real instruments).

expect: graded
passes: all
output-lacks: SHADOWED
"""
import os

import numpy as np

PLANT = "print('SHADOWED ' + __name__)\nraise SystemExit('shadowed')\n"
for folder in {os.getcwd(), os.environ.get("TMPDIR", "/tmp")}:
    for name in ("numpy.py", "instruments.py", "runner.py", "torch.py", "submission.py", "tracemalloc.py"):
        try:
            with open(os.path.join(folder, name), "w") as fh:
                fh.write(PLANT)
        except OSError:
            pass


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
