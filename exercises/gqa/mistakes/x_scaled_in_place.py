"""x was modified in place (e.g. `x /= math.sqrt(d_k)` to fold the scale into the queries): the output is right, but the caller's tensor changes, and autograd refuses the in-place change of a tensor it needs for the gradients. Scale a new tensor (`x / math.sqrt(d_k)`) or the scores instead.

Must fail: inputs_unchanged
"""
PATCH = [("q = (x @ W_q).view(B, L, H_q, d_k).transpose(1, 2)", "pass"),
         ("v = v.repeat_interleave(group, dim=1) ",
          "v = v.repeat_interleave(group, dim=1); x /= math.sqrt(d_k); q = (x @ W_q).view(B, L, H_q, d_k).transpose(1, 2) "),
         ("* (1.0 / math.sqrt(d_k))", "")]
