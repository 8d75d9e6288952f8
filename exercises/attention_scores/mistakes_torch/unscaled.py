"""scores were not scaled by 1/sqrt(d_k): the weights are softmax(Q K^T).

Must fail: scaling
"""
PATCH = [("key.transpose(-1, -2) / math.sqrt(d_k)", "key.transpose(-1, -2)")]
