"""Wrong (PyTorch track): calls torch.softmax, which the exercise forbids (static API rule).

Must fail: values_1d
Mistake: forbidden_api
"""

import torch


def softmax(x, axis=-1):
    return torch.softmax(x, dim=axis)
