"""the feature map was written into the caller's query in place (query[...] = phi(query), np.exp(query, out=query) and the like): the result is right, but inputs must never be modified.

Must fail: inputs_unchanged
"""
PATCH = [("    return (num / den).astype(dtype)", "    query[...] = phi_q\n    return (num / den).astype(dtype)")]
