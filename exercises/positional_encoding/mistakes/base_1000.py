"""the frequencies used base 1000 instead of 10000 (10000^(2i/d_model) is the paper's wavelength scale): every pair past the first rotates too fast.

Must fail: values, hidden_values

Source: https://github.com/maxjcohen/transformer/issues/62
The report shows generate_original_PE dividing positions by torch.pow(1000, 2i/d_model), fixed to 10000 by the maintainer.
"""
PATCH = [('inv_freq = np.power(10000.0, -two_i / d_model)', 'inv_freq = np.power(1000.0, -two_i / d_model)')]
