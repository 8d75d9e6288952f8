"""the attention weights were detached from the autograd graph (e.g. a leftover `.detach()` for plotting them): the output is right, but no gradient reaches x through the queries and keys, nor W_q and W_k.

Must fail: grad_input, grad_weights
"""
PATCH = [("y = att @ v ", "y = att.detach() @ v ")]
