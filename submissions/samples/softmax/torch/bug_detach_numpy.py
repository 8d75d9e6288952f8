"""Wrong (PyTorch track): computes the right numbers in NumPy and wraps them back into a tensor, so
no gradient flows to x.

Must fail: gradients
Mistake: no_gradient
"""

import numpy as np
import torch


def softmax(x, axis=-1):
    a = x.detach().to(torch.float64).numpy()
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(a - m)
    s = e.sum(axis=axis, keepdims=True)
    out = np.divide(e, s, out=np.zeros_like(e), where=s > 0)
    return torch.from_numpy(out).to(x.dtype)
