"""Hostile: os._exit(0) at import: no exception, no import frame, a clean exit code (it compiled:
it exited, so the status is crashed, never compile_error).

expect: crashed
passes: none
"""
import os

os._exit(0)


def softmax(x, axis=-1):
    return x
