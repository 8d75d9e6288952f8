"""float16 input was accumulated in float32, as asked, but the result was not cast back: the output must keep query's dtype.

Must fail: dtype_preserved
"""
PATCH = [("    return (num / den).astype(dtype)", "    return (num / den).astype(work)")]
