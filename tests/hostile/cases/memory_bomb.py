"""Hostile: allocates (and touches) memory without end when called.

Under docker the memory cgroup kills the container; the process backend's address-space limit turns
it into a MemoryError in each step.

expect: crashed
process: graded
verdicts: memory_limit
passes: none
limits: memory_bytes=536870912 wall_seconds=30
"""
hoard = []


def softmax(x, axis=-1):
    while True:
        hoard.append(bytearray(64 << 20))
