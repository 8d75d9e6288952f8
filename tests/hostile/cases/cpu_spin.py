"""Hostile: spins the CPU forever when called.

expect: timeout
passes: none
limits: wall_seconds=5 step_seconds=600 cpu_seconds=600
"""


def softmax(x, axis=-1):
    while True:
        pass
