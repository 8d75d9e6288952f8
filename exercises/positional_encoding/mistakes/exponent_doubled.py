"""the exponent was 2 * column / d_model with the column index stepping by 2 (sin of column 2i uses 10000^(4i/d_model), cos of column 2i+1 uses 10000^((4i+2)/d_model)): the "2i" of the formula already counts columns, so it was doubled; both columns of pair i use 10000^(2i/d_model).

Must fail: values, hidden_values

Source: https://github.com/SamLynnEvans/Transformer/issues/25
The report shows PositionalEncoder looping `for i in range(0, d_model, 2)` and computing sin(pos / 10000 ** ((2 * i) / d_model)) and cos(pos / 10000 ** ((2 * (i + 1)) / d_model)).
"""
PATCH = [('pe[:, 0::2] = np.sin(angle)', 'pe[:, 0::2] = np.sin(p[:, None] / np.power(10000.0, (2 * two_i) / d_model))'),
         ('pe[:, 1::2] = np.cos(angle)', 'pe[:, 1::2] = np.cos(p[:, None] / np.power(10000.0, (2 * (two_i + 1)) / d_model))')]
