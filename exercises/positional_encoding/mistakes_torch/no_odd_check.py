"""an odd d_model was not rejected with ValueError (the slicing silently drops the last cosine column).

Must fail: odd_d_model
"""
PATCH = [("if d_model < 0 or d_model % 2 != 0:", "if d_model < 0:"),
         ("pe[:, 1::2] = torch.cos(angle)", "pe[:, 1::2] = torch.cos(angle)[:, : d_model // 2]")]
