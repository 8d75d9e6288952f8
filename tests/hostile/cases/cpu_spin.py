"""Hostile: spins forever when called."""


def softmax(x, axis=-1):
    while True:
        pass
