"""the running output was divided by the rescale factor exp(m_old - m_new) instead of multiplied by it (diag(exp(m_old - m_new))^-1 O, as the FlashAttention-2 paper's Algorithm 1 misprints it): the first block divides 0 by exp(-inf) = 0 and the result is NaN; rescale the past output by exp(m_old - m_new).

Must fail: values

Source: https://github.com/Dao-AILab/flash-attention/issues/991
The issue points out that line 10 of Algorithm 1 in the FlashAttention-2 paper rescales O with diag(e^{m_old - m_new})^{-1}, which should have no inverse; an implementation following the paper gets wrong results (see also issue #333).
"""
PATCH = [("acc = alpha * acc + p @ v[:, :, ks:ks + block_size]     # (B, H, L_q, d)",
          "acc = acc / alpha + p @ v[:, :, ks:ks + block_size]     # (B, H, L_q, d)")]
