"""Wrong (PyTorch track): Tensor.softmax through a variable, invisible to the AST scan; the op audit
sees aten._softmax run.

Must fail: values_1d
Mistake: forbidden_api
"""


def softmax(x, axis=-1):
    return x.softmax(axis)
