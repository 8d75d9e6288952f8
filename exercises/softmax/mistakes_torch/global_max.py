"""the single global maximum of the whole tensor was subtracted instead of each slice's own maximum along the axis; slices far below it underflow to 0/0.

Must fail: large_logits
"""
PATCH = [("m = torch.amax(x, dim=axis, keepdim=True).detach()", "m = torch.amax(x).detach()"),
         ("return torch.where(s > 0, e / safe, torch.zeros_like(e))", "return e / s")]
