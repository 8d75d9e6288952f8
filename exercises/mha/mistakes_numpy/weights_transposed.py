"""the projections used the transposed weights (x @ W.T, nn.Linear's convention), but the contract multiplies on the right: Q = query @ W_q, and the output is merged @ W_o.

Must fail: self_attention, cross_attention
"""
PATCH = [("q = (query @ W_q)", "q = (query @ W_q.T)"), ("k = (key @ W_k)", "k = (key @ W_k.T)"),
         ("v = (value @ W_v)", "v = (value @ W_v.T)"), ("return (y @ W_o)", "return (y @ W_o.T)")]
