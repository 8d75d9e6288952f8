"""the caller's query was changed in place (e.g. scaled there, `query.div_(math.sqrt(d_k))`): the caller's tensor is changed, and autograd refuses an in-place edit of a leaf that requires grad (scale a new tensor: `query / math.sqrt(d_k)`, or scale the scores).

Must fail: inputs_unchanged, gradients
"""
PATCH = [("    scores = query @ key.transpose(-1, -2) / math.sqrt(d_k)                # (..., L_q, L_k)\n",
          "    query.div_(math.sqrt(d_k))\n    scores = query @ key.transpose(-1, -2)\n")]
