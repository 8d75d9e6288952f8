"""the scores were divided by d_k instead of sqrt(d_k).

Must fail: values, non_causal
"""
PATCH = [
    ('* work.type(1.0 / math.sqrt(d_k))',
     '* work.type(1.0 / d_k)'),
]
