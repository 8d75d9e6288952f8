"""Exercise `rope`, NumPy track: rotary position embedding.

Read the full statement with `grade show rope --track numpy`. Grade your work with
`grade submit rope THIS_FILE --track numpy`.
"""

import numpy as np


def apply_rope(x, positions, base=10000.0):
    """Rotary position embedding in the rotate_half layout (GPT-NeoX / Hugging Face LLaMA).

    Args:
        x: (..., seq_len, d) array, d even (odd: raise ValueError).
        positions: seq_len absolute positions: a list of ints or an integer array of shape (seq_len,)
            of any integer dtype (e.g. T .. T+seq_len-1 when decoding after T cached tokens).
        base: frequency base.

    Returns:
        Array of x's shape and dtype: x * cos(theta) + rotate_half(x) * sin(theta), where
        theta[r] = positions[r] * base^(-2i/d) for i < d/2, repeated twice along the last axis, and
        rotate_half([x1, x2]) = [-x2, x1] on the two halves. float32/float64 inputs are rotated at
        their own precision; float16 at float32, then cast back. Do not modify x in place.
    """
    raise NotImplementedError("implement apply_rope")
