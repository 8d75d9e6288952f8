"""float64 inputs came out right only to float32 precision, as when they are computed in float32 internally (cast down, then the result cast back to float64) or a constant in the computation (the scale, say) is a float32 number: compute float64 input in float64 throughout.

Must fail: float64
"""
PATCH = [
    ('    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype',
     '    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16, torch.float64) else query.dtype'),
]

REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
