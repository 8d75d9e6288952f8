"""the caller's query was changed in place (e.g. scaled there: query *= 1/sqrt(d_k)); inputs are never modified.

Must fail: inputs_unchanged
"""
PATCH = [
    ('    q = query.astype(work) * work.type(1.0 / math.sqrt(d_k))',
     "    query *= query.dtype.type(1.0 / math.sqrt(d_k))            # the caller's array\n    q = query.astype(work)"),
]
