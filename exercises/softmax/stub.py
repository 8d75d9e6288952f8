"""Exercise `softmax`: a numerically stable softmax in NumPy.

Read the full statement with `grade show softmax`. Grade your work with
`grade submit softmax THIS_FILE`.
"""

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax of `x` along `axis`.

    Args:
        x: floating array of any number of dimensions (float32 or float64), possibly
            non-contiguous. Do not modify it.
        axis: the axis to normalise over; negative values count from the end.

    Returns:
        Array with the same shape and dtype as `x`, summing to 1 along `axis`. Entries equal to
        -inf get probability 0; a slice that is entirely -inf gives zeros (not NaN). Must stay
        finite for logits as large as the dtype allows.
    """
    raise NotImplementedError("implement softmax")
