"""Hostile: calls sys.exit(0) at import, hoping a clean exit reads as success.

expect: compile_error
passes: none
"""
import sys

sys.exit(0)


def softmax(x, axis=-1):
    return x
