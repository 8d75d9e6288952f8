"""float64 inputs were computed in float32 internally (cast down, then the result cast back to float64): the answer is right only to float32 precision; compute float64 input in float64.

Must fail: float64
"""
PATCH = [
    ('    work = np.dtype(np.float32) if query.dtype == np.float16 else query.dtype',
     '    work = np.dtype(np.float32)'),
]

REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
