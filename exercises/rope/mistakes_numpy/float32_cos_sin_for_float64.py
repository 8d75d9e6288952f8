"""float64 inputs were rotated only to the precision of float32 cos/sin, as when the angle table and its cos/sin are built in float32 for a float64 input (np.cos of float32 angles is rounded to float32 even where the angles themselves are exact): float64 inputs are rotated at float64 precision (build inv_freq, positions * inv_freq and the cos/sin in x's dtype).

Must fail: float64
"""
PATCH = [('theta = pos.astype(work)[:, None] * inv_freq[None, :]', 'theta = pos.astype(np.float32)[:, None] * inv_freq[None, :].astype(np.float32)'),
         ('cos, sin = np.cos(emb), np.sin(emb)', 'cos, sin = np.cos(emb).astype(work), np.sin(emb).astype(work)')]
REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
REPLAY_EVIDENCE = "float64_values"  # float32 cos/sin times float64 inputs: values that are no float32 numbers
