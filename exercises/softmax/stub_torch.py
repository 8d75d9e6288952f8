"""Exercise `softmax` (PyTorch track): a numerically stable softmax with torch tensors.

Read the full statement with `grade show softmax --track torch`. Grade your work with
`grade submit softmax --track torch THIS_FILE`. torch.softmax, torch.nn.functional.softmax,
Tensor.softmax and log_softmax are forbidden: write it from torch.exp, torch.amax, torch.sum, ...
"""

import torch


def softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    """Softmax of `x` along `axis`.

    Args:
        x: floating tensor of any number of dimensions (float16, bfloat16, float32 or float64),
            possibly non-contiguous. Do not modify it.
        axis: the axis to normalise over; negative values count from the end.

    Returns:
        Tensor with the same shape and dtype as `x`, summing to 1 along `axis`. Entries equal to
        -inf get probability 0; a slice that is entirely -inf gives zeros (not NaN). Must stay
        finite for logits as large as the dtype allows, and differentiable: gradients with
        respect to `x` are graded.
    """
    raise NotImplementedError("implement softmax")
