"""the exponent 2i/d_model was computed with integer division (2i // d_model), which is 0 for every pair: every frequency became 1; use true division.

Must fail: values
"""
PATCH = [('inv_freq = np.power(10000.0, -two_i / d_model)', 'inv_freq = np.power(10000.0, -(two_i // d_model))')]
