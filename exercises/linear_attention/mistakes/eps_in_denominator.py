"""an epsilon (1e-6) was added to the denominator, as the paper's code does (fast_transformers' LinearAttention, eps=1e-6): the contract has none (phi > 0 keeps phi(q_i)^T z positive), and where the denominators are small (features far below zero) the epsilon is not small.

Must fail: large_magnitudes
"""
PATCH = [("    return (num / den).astype(dtype)", "    return (num / (den + 1e-6)).astype(dtype)")]
