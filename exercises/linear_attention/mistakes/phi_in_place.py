"""the caller's query was changed in place (e.g. the feature map written into it: query[...] = phi(query), np.exp(query, out=query) and the like): the result is right, but inputs must never be modified.

Must fail: inputs_unchanged
"""
PATCH = [("    return (num / den).astype(dtype)", "    query[...] = phi_q\n    return (num / den).astype(dtype)")]
