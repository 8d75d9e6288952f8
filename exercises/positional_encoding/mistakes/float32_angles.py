"""the encoding is right only to the precision of float32 angles: near position 10^6 it is off by as much as a float32 angle makes it (up to 0.03 radians), as when the angles p / 10000^(2i/d_model) are computed in float32 (the positions, the frequencies or their product, or a step such as a reduction by a float32 2*pi), or a constant such as 2*pi, pi/2 or ln(10000) is typed to 6 or 7 digits. Form the angles in float64 from full-precision constants and cast only the result to float32.

Must fail: large_positions
"""
PATCH = [('angle = p[:, None] * inv_freq[None, :]', 'angle = p[:, None].astype(np.float32) * inv_freq[None, :].astype(np.float32)')]
REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
