"""Hostile: calls sys.exit(0) at import, hoping a clean exit reads as success."""
import sys

sys.exit(0)


def softmax(x, axis=-1):
    return x
