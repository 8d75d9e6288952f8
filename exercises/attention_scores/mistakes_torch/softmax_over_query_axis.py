"""the softmax was taken over the query axis (-2) instead of the key axis (-1).

Must fail: weights_basic
"""
PATCH = [("torch.amax(scores, dim=-1", "torch.amax(scores, dim=-2"), ("torch.sum(e, dim=-1", "torch.sum(e, dim=-2")]
