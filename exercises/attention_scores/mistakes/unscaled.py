"""scores were not scaled by 1/sqrt(d_k): the weights are softmax(Q K^T).

Must fail: scaling
"""
PATCH = [("/ math.sqrt(d_k)     # (..., L_q, L_k)", "                     # (..., L_q, L_k)")]
