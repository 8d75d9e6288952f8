"""the frequencies were inverted: positions were multiplied by 10000^(2i/d_model) (the minus sign of the exponent lost, e.g. div_term = exp(+log(10000) * 2i / d_model)); the angle is p / 10000^(2i/d_model).

Must fail: values
"""
PATCH = [('inv_freq = np.power(10000.0, -two_i / d_model)', 'inv_freq = np.power(10000.0, two_i / d_model)')]
