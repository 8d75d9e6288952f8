"""the frequencies used 10000^(i/d_model) for pair i; the exponent is 2i/d_model (pair i owns columns 2i and 2i+1).

Must fail: values
"""
PATCH = [('inv_freq = np.power(10000.0, -two_i / d_model)', 'inv_freq = np.power(10000.0, -(two_i / 2) / d_model)')]
