"""the scores were divided by d, the head width, instead of sqrt(d).

Must fail: values
"""
PATCH = [('qs = q * q.dtype.type(1.0 / math.sqrt(d))', 'qs = q * q.dtype.type(1.0 / d)')]
