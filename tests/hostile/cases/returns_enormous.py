"""Hostile: returns deeply nested, self-referential and enormous structures in turn: a list nested
100,000 deep, a list holding itself, a tuple of a million arrays, a dict of a million entries, a
100 MB string, an int of a million bits, a generator, a set.

expect: graded
passes: input_unchanged|input_unchanged,memory_scaling
host: memory
"""
import numpy as np

calls = 0


def _nested(depth):
    out = []
    for _ in range(depth):
        out = [out]
    return out


def softmax(x, axis=-1):
    global calls
    calls += 1
    which = calls % 8
    if which == 0:
        return _nested(100_000)
    if which == 1:
        loop = [x]
        loop.append(loop)
        return loop
    if which == 2:
        return tuple(x for _ in range(1_000_000))
    if which == 3:
        return {i: x for i in range(1_000_000)}
    if which == 4:
        return "x" * (100 << 20)
    if which == 5:
        return 1 << 1_000_000
    if which == 6:
        return (x for _ in range(10))
    return {1, 2, 3}
