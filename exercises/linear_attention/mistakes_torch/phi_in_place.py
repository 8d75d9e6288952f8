"""the feature map was written into the caller's query in place (query.copy_(phi(query)) under no_grad, F.elu_ and the like): the result is right, but inputs must never be modified.

Must fail: inputs_unchanged
"""
PATCH = [("    return (num / den).to(dtype)",
          "    with torch.no_grad():\n        query.copy_(phi_q)\n    return (num / den).to(dtype)")]
