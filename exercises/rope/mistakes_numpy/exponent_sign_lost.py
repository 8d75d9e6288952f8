"""the frequencies were base^(+2i/d), as when the exponent's minus sign is lost: every pair past the first rotates thousands of radians per position instead of ever more slowly; theta_i = base^(-2i/d).

Must fail: values, hidden_values

Source: https://github.com/labmlai/annotated_deep_learning_paper_implementations/issues/313
The issue reports that labml_nn's RoPE implementation states theta_i = 10000^(2(i-1)/d) without the minus sign.
"""
PATCH = [('inv_freq = (1.0 / (work(base) ** (np.arange(0, d, 2, dtype=work) / work(d)))).astype(work)',
          'inv_freq = (work(base) ** (np.arange(0, d, 2, dtype=work) / work(d))).astype(work)')]
