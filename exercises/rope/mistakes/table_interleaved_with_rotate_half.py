"""the angle table was repeated element by element (repeat_interleave: theta0, theta0, theta1, theta1, ...) while rotate_half pairs feature i with feature i + d/2: the two conventions were mixed, so paired features are rotated by different angles; with rotate_half the table is [theta, theta] (concatenated).

Must fail: values, hidden_values

Source: https://github.com/raiyanyahya/how-to-train-your-gpt/issues/6
The report shows the tutorial's RoPE building emb = freqs.repeat_interleave(2, dim=-1) and rotating with the split-half rotate_half, so dimension 0 (angle theta0) is paired with dimension d/2 (angle theta1).
"""
PATCH = [('emb = torch.cat([theta, theta], dim=-1)', 'emb = theta.repeat_interleave(2, dim=-1)')]
