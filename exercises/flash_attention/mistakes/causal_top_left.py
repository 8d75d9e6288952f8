"""the causal mask was aligned top-left (key j hidden when j > i); with L_q != L_k the contract aligns it bottom-right (hidden when j > i + L_k - L_q), as a KV cache needs.

Must fail: causal_bottom_right
"""
PATCH = [("    offset = L_k - L_q ", "    offset = 0 ")]
