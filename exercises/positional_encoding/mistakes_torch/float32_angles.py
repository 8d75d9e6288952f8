"""the angles p / 10000^(2i/d_model) were computed at float32 precision (the positions, the frequencies or their product in float32): near position 10^6 a float32 angle is off by up to 0.03 radians. Form the angles in float64 (positions and frequencies) and cast only the result to float32.

Must fail: large_positions
"""
PATCH = [('angle = p[:, None] * inv_freq[None, :]', 'angle = p[:, None].float() * inv_freq[None, :].float()')]
REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
