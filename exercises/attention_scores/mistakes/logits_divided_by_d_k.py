"""scores were divided by d_k instead of sqrt(d_k) (as when the 1/sqrt(d_k) scale is applied twice).

Must fail: scaling
"""
PATCH = [("/ math.sqrt(d_k)     # (..., L_q, L_k)", "/ d_k                # (..., L_q, L_k)")]
