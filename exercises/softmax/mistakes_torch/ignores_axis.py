"""the axis argument is ignored: the softmax is always taken over the last axis.

Must fail: axes
"""
PATCH = [("m = torch.amax(x, dim=axis, keepdim=True).detach()", "axis = -1\n    m = torch.amax(x, dim=axis, keepdim=True).detach()")]
