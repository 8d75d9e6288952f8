"""the attention weights were computed outside autograd (under torch.no_grad() or with .detach()), so no gradient reaches query or key (value still gets one): keep the scores and the softmax on the autograd graph.

Must fail: gradients
"""
PATCH = [("    return _softmax_last(scores)\n", "    return _softmax_last(scores).detach()\n")]
