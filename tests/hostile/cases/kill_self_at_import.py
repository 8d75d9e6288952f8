"""Hostile: SIGKILLs its own process at import (a crash the host did not cause).

expect: crashed
passes: none
"""
import os
import signal

os.kill(os.getpid(), signal.SIGKILL)


def softmax(x, axis=-1):
    return x
