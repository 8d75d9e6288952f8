"""the new tokens' keys and values were detached from the graph (e.g. a round trip through NumPy) before they were cached, so no gradient flows back to x, W_k and W_v through them.

Must fail: gradients
"""
PATCH = [("k = self._split_heads(x @ W_k) ", "k = self._split_heads(x @ W_k).detach() "),
         ("v = self._split_heads(x @ W_v) ", "v = self._split_heads(x @ W_v).detach() ")]
