"""the angular frequencies grew linearly with the column (2i * 1000 / d_model) instead of geometrically (10000^(-2i/d_model)): pair 0 never changes with position and the others wrap around far too fast.

Must fail: values, hidden_values

Source: https://github.com/aharley/pips/issues/30
The issue shows get_3d_embedding computing div_term = torch.arange(0, C, 2) * (1000.0 / C) and sin(x * div_term); the author agreed it is wrong.
"""
PATCH = [('inv_freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)',
          'inv_freq = torch.arange(0, d_model, 2, dtype=torch.float64) * (1000.0 / d_model)')]
