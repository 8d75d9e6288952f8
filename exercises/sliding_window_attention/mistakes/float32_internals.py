"""float64 inputs were computed in float32 internally (cast down, then the result cast back to float64): the answer is right only to float32 precision; compute float64 input in float64.

Must fail: float64
"""
PATCH = [
    ('    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype',
     '    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16, torch.float64) else query.dtype'),
]

REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
