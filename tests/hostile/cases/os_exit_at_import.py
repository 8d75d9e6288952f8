"""Hostile: os._exit(0) at import: no exception, no import frame, a clean exit code.

expect: compile_error
passes: none
"""
import os

os._exit(0)


def softmax(x, axis=-1):
    return x
