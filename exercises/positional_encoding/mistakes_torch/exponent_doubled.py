"""the exponent was 2 * column / d_model with the column index stepping by 2 (sin of column 2i uses 10000^(4i/d_model), cos of column 2i+1 uses 10000^((4i+2)/d_model)): the "2i" of the formula already counts columns, so it was doubled; both columns of pair i use 10000^(2i/d_model).

Must fail: values, hidden_values

Source: https://github.com/intro-llm/intro-llm.github.io/issues/34
The report shows the book's PositionalEncoder computing math.sin(pos / (10000 ** ((2 * i)/d_model))) and math.cos(pos / (10000 ** ((2 * (i + 1))/d_model))) for i in range(0, d_model, 2); the maintainers corrected it.
"""
PATCH = [('pe[:, 0::2] = torch.sin(angle)',
          'col = torch.arange(0, d_model, 2, dtype=torch.float64)\n'
          '    pe[:, 0::2] = torch.sin(p[:, None] / 10000.0 ** ((2 * col) / d_model))'),
         ('pe[:, 1::2] = torch.cos(angle)', 'pe[:, 1::2] = torch.cos(p[:, None] / 10000.0 ** ((2 * (col + 1)) / d_model))')]
