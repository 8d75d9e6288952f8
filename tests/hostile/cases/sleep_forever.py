"""Hostile: sleeps (almost) forever at import.

expect: timeout
passes: none
limits: wall_seconds=5
"""
import time

time.sleep(1e9)


def softmax(x, axis=-1):
    return x
