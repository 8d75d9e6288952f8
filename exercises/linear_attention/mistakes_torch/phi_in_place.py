"""the caller's query was changed in place (e.g. the feature map written into it: query.copy_(phi(query)) under no_grad, F.elu_ and the like): the result is right, but inputs must never be modified.

Must fail: inputs_unchanged
"""
PATCH = [("    return (num / den).to(dtype)",
          "    with torch.no_grad():\n        query.copy_(phi_q)\n    return (num / den).to(dtype)")]
