"""x was rotated in place (the result written back into the caller's array): the output is right, but the input changed. Build a new array instead of assigning into x.

Must fail: input_unchanged
"""
PATCH = [("return (xw * cos + rotated * sin).astype(x.dtype)",
          "x[...] = (xw * cos + rotated * sin).astype(x.dtype)\n"
          "    return x")]
