"""Hostile: ignores SIGTERM, SIGINT and SIGHUP, then spins at import."""
import signal

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)
while True:
    pass


def softmax(x, axis=-1):
    return x
