"""on the causal path the running state S_i was divided feature by feature by the running key sum z_i before the query was applied (sum_c phi(q_i)_c S_i[c] / z_i[c]) instead of dividing phi(q_i)^T S_i by the scalar phi(q_i)^T z_i.

Must fail: causal

Source: https://github.com/lucidrains/performer-pytorch/issues/21
The issue quotes causal_linear_attention_noncuda dividing the cumulative context by k_cumsum.unsqueeze(-1) before the einsum with q, and asks why it is not normalised by q times k_cumsum as in "Transformers are RNNs".
"""
PATCH = [('num = np.einsum("bhld,bhlde->bhle", phi_q, S)           # (B, H, L, d_v)',
          'num = np.einsum("bhld,bhlde->bhle", phi_q, S / z[..., None])  # state divided by the key sum'),
         ("den = np.sum(phi_q * z, axis=-1, keepdims=True)         # (B, H, L, 1)",
          "den = np.ones(phi_q.shape[:-1] + (1,), dtype=phi_q.dtype)  # no scalar normaliser")]
