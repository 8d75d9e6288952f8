"""the exponentials were divided by their sum over the whole tensor instead of along the axis (a sum without dim): each slice sums to its share of the total, not to 1; only a 1-D input comes out right.

Must fail: values_nd, hidden_values

Source: https://github.com/uTensor/uTensor/pull/171
The pull request explains that uTensor's SoftmaxOp "summed up all elements in the tensor rather than along one axis", which made the output totally wrong.
"""
PATCH = [("s = torch.sum(e, dim=axis, keepdim=True)", "s = torch.sum(e)")]
