"""a hand-written backward summed grad * p over the whole tensor instead of along the softmax axis (no dim/keepdim): every slice's gradient is shifted by the other slices' terms; the values are right, the gradient is not (d softmax_i / d x_j = p_i (delta_ij - p_j) within one slice: sum(grad * p, axis, keepdim=True)).

Must fail: gradients
"""
BASE = "diagonal_jacobian_backward"
PATCH = [("return grad * p, None                                    # missing: - p * sum(grad * p, axis)",
          "return p * (grad - (grad * p).sum()), None  # the sum needs dim=axis, keepdim=True")]
