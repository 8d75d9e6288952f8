"""Hostile: one huge NumPy allocation (1 TiB, touched) per call.

expect: graded
verdicts: memory_limit
passes: none
limits: memory_bytes=536870912 wall_seconds=30
"""
import numpy as np


def softmax(x, axis=-1):
    return np.ones((1 << 40,), dtype=np.uint8)
