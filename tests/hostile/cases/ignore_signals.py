"""Hostile: ignores SIGTERM, SIGINT, SIGHUP and SIGALRM, then spins at import.

expect: timeout
passes: none
limits: wall_seconds=5 cpu_seconds=600
"""
import signal

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM):
    signal.signal(sig, signal.SIG_IGN)
while True:
    pass


def softmax(x, axis=-1):
    return x
