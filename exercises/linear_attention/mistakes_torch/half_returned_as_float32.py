"""half-precision input was accumulated in float32, as asked, but the result was not cast back: the output must keep query's dtype.

Must fail: dtype_preserved
"""
PATCH = [("    return (num / den).to(dtype)", "    return (num / den).to(work)")]
