"""x was rotated in place under torch.no_grad() and returned (a copy of x): the input changed, and the result is cut from the rotation in the graph, so the gradient reaching x is the identity instead of the inverse rotation. Build a new tensor instead of assigning into x.

Must fail: input_unchanged, grad_x
"""
PATCH = [("return (xw * cos + rotated * sin).to(x.dtype)",
          "out = (xw * cos + rotated * sin).to(x.dtype)\n"
          "    with torch.no_grad():\n"
          "        x.copy_(out)\n"
          "    return x.clone()")]
