"""the scores were not scaled: the output matches softmax(Q K^T) V instead of softmax(Q K^T / sqrt(d_k)) V.

Must fail: self_attention
"""
PATCH = [("k.transpose(0, 1, 3, 2) / np.asarray(math.sqrt(d_k), dtype=query.dtype)", "k.transpose(0, 1, 3, 2)")]
