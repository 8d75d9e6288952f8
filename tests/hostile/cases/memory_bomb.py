"""Hostile: allocates (and touches) memory without end when called."""
import numpy as np

hoard = []


def softmax(x, axis=-1):
    while True:
        hoard.append(bytearray(64 << 20))
