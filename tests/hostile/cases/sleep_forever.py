"""Hostile: sleeps (almost) forever at import."""
import time

time.sleep(1e9)


def softmax(x, axis=-1):
    return x
