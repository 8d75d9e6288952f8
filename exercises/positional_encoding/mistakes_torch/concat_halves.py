"""the sines and cosines were concatenated as [sin | cos] halves: that is the tensor2tensor / MAE layout, a valid convention, but this exercise asks for the interleaved one of Vaswani et al.: PE[:, 2i] = sin, PE[:, 2i+1] = cos of the same angle.

Must fail: values
"""
PATCH = [('pe[:, 0::2] = torch.sin(angle)', 'pe[:, : d_model // 2] = torch.sin(angle)'), ('pe[:, 1::2] = torch.cos(angle)', 'pe[:, d_model // 2:] = torch.cos(angle)')]
