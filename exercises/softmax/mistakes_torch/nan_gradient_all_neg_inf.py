"""the gradient of x is NaN in a slice that is entirely -inf: the forward pass hides the NaN of that slice (a torch.where or nan_to_num applied after it was computed), but the NaN still flows backward. Never compute the NaN: shift by 0 where the max is -inf and divide only where the sum is > 0.

Must fail: gradients
"""
PATCH = [("    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # an all -inf slice: shift by 0\n", ""),
         ("    safe = torch.where(s > 0, s, torch.ones_like(s))         # no 0/0, even in the branch not taken\n"
          "    return torch.where(s > 0, e / safe, torch.zeros_like(e))  # all -inf slice -> zeros",
          "    y = e / s\n"
          "    return torch.where(torch.isnan(y), torch.zeros_like(y), y)")]
