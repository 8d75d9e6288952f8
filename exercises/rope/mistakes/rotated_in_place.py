"""x was rotated in place (the result written back into the caller's tensor): the output is right, but the input changed. Build a new tensor instead of assigning into x.

Must fail: input_unchanged
"""
PATCH = [("return (xw * cos + rotated * sin).to(x.dtype)",
          "out = (xw * cos + rotated * sin).to(x.dtype)\n"
          "    with torch.no_grad():\n"
          "        x.copy_(out)\n"
          "    return out")]
