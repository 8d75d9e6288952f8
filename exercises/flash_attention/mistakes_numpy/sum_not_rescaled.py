"""the running max was not used to rescale the running sum: when a later block raises the max m, the sum l must become l * exp(m_old - m_new) + rowsum(p), as the output is.

Must fail: values
"""
PATCH = [("l = alpha * l + p.sum(axis=-1, keepdims=True)", "l = l + p.sum(axis=-1, keepdims=True)")]
