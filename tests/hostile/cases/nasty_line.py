"""Hostile: one 10 MB line on stdout (and a piece of it on stderr) with NUL bytes, invalid UTF-8 and terminal escapes
(clear screen, OSC 52 clipboard write, a title change, carriage returns), then answers correctly.
The captured output must hold no raw control character; the table, HTML report and exports render.

expect: graded
passes: all
host: exports
"""
import os
import sys

import numpy as np

chunk = (b"\x00\xff\xfe\xc3\x28\x1b[2J\x1b[H\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;PASS\x07\rPASS \x9b31m"
         b"\xe2\x80\xae\xf0\x28\x8c\xbc")
line = chunk * (10_000_000 // len(chunk)) + b"\n"
sys.stdout.flush()
os.write(1, line)
os.write(2, chunk * 100 + b"\n")


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
