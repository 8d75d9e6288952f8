"""the key was detached from the autograd graph (e.g. `key.detach()` to save memory): the output and the gradients of query and value are right, but no gradient reaches key.

Must fail: gradients
"""
PATCH = [("scores = query @ key.transpose(-1, -2) ", "scores = query @ key.detach().transpose(-1, -2) ")]
