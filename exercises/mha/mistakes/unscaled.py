"""scores were not scaled by 1/sqrt(d_k): the weights are softmax(q k^T).

Must fail: self_attention
"""
PATCH = [("(1.0 / math.sqrt(d_k))", "1.0")]
