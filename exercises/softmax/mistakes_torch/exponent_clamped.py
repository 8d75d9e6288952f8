"""the shifted logits were clamped from below (e.g. at -80) before exp, so -inf entries get a tiny nonzero probability instead of exactly 0 and an all -inf slice becomes uniform.

Must fail: neg_inf_entries, all_neg_inf
"""
PATCH = [("e = torch.exp(x - m)", "e = torch.exp(torch.clamp(x - m, min=-80.0))")]
