"""Hostile: one huge torch allocation (1 TiB, touched) per call, in a torch exercise.

expect: graded
process: skip: torch exercises are graded once (docker) to keep CI short
verdicts: memory_limit
passes: none
exercise: mha
limits: memory_bytes=1073741824 wall_seconds=60
"""
import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    return torch.ones((1 << 40,), dtype=torch.uint8)
