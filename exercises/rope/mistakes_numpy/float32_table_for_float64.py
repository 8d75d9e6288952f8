"""float64 inputs were rotated only to the precision of a float32 angle table, as when the angle table (or its cos/sin) is built in float32 for a float64 input: float64 inputs are rotated at float64 precision (build inv_freq and positions * inv_freq in x's dtype).

Must fail: float64
"""
PATCH = [('theta = pos.astype(work)[:, None] * inv_freq[None, :]', 'theta = (pos.astype(np.float32)[:, None] * inv_freq[None, :].astype(np.float32)).astype(work)')]
REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
