"""the previous output was not rescaled: when a later block raises the max m, the accumulated output must become acc * exp(m_old - m_new) + p @ v.

Must fail: values
"""
PATCH = [("acc = alpha * acc + p @ v[:, :, ks:ks + block_size]", "acc = acc + p @ v[:, :, ks:ks + block_size]")]
