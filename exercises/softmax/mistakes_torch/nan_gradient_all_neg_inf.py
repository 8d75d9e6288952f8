"""the gradient of x is NaN in a slice that is entirely -inf: a NaN is computed for that slice on the way to the gradient, in the forward pass and hidden after it (torch.where, nan_to_num) or in a custom backward that recomputes the probabilities unguarded. Never compute it: shift by 0 where the max is -inf and divide only where the sum is > 0 (in a custom backward too).

Must fail: gradients
"""
PATCH = [("    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # an all -inf slice: shift by 0\n", ""),
         ("    safe = torch.where(s > 0, s, torch.ones_like(s))         # no 0/0, even in the branch not taken\n"
          "    return torch.where(s > 0, e / safe, torch.zeros_like(e))  # all -inf slice -> zeros",
          "    y = e / s\n"
          "    return torch.where(torch.isnan(y), torch.zeros_like(y), y)")]
