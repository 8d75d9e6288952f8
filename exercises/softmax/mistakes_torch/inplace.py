"""the input tensor is modified in place (e.g. `x.sub_(x.max(...))` or `x -= ...` under torch.no_grad()); work on a new tensor (`x - m`).

Must fail: input_unchanged
"""
PATCH = [("    e = torch.exp(x - m)", "    with torch.no_grad():\n        x.sub_(m)\n    e = torch.exp(x)")]
