"""the caller's float mask was changed in place (e.g. rewritten into an additive bias: masked_fill_ with -inf, then 0 where it may attend); the output and its gradients are right, but the caller's mask is destroyed.

Must fail: inputs_unchanged
"""
PATCH = [("keep = mask != 0 ",
          "keep = mask != 0; mask.masked_fill_(~keep, float('-inf')).masked_fill_(keep, 0.0) if mask.is_floating_point() else None ")]
