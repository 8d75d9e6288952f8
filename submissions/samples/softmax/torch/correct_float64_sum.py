"""Correct (PyTorch track): exponentials in the input dtype, the normaliser accumulated with
torch.sum(dtype=torch.float64) and cast back; torch.where picks zeros for empty slices."""
import torch


def softmax(x, axis=-1):
    m = torch.max(x, dim=axis, keepdim=True)[0]
    m = torch.where(torch.isfinite(m), m, torch.zeros((), dtype=x.dtype))
    e = torch.exp(x - m)
    s = torch.sum(e, dim=axis, keepdim=True, dtype=torch.float64).to(x.dtype)
    safe = torch.where(s > 0, s, torch.ones((), dtype=x.dtype))
    return e / safe
