"""the frequencies were indexed from i - 1 (base^(-2(i-1)/d), the paper's 1-based theta_i = base^(-2(i-1)/d) applied to a 0-based i): every pair got its predecessor's frequency shifted by one step, pair 0 rotating faster than 1 radian per position; for 0-based i the frequency is base^(-2i/d).

Must fail: values, hidden_values

Source: https://github.com/bkitano/llama-from-scratch/issues/8
The issue shows get_rotary_matrix computing theta = 10000. ** (-2.*(i - 1) / embedding_dim) for i in range(embedding_dim//2) and proposes -2.*i.
"""
PATCH = [('np.arange(0, d, 2, dtype=work) / work(d)', '(np.arange(0, d, 2, dtype=work) - 2) / work(d)')]
