"""Correct: move the axis last, normalise row by row in a Python loop, move it back."""
import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    moved = np.moveaxis(x, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    result = np.empty_like(flat)
    for i, row in enumerate(flat):
        top = row.max() if row.size else 0
        if not np.isfinite(top):
            result[i] = 0
            continue
        with np.errstate(over="ignore"):
            e = np.exp(row - top)
        result[i] = e / e.sum()
    return np.moveaxis(result.reshape(moved.shape), -1, axis)
