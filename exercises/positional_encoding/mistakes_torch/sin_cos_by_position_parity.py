"""sin and cos were chosen by the parity of the position (even rows sin, odd rows cos) instead of the column (even columns 2i sin, odd columns 2i+1 cos): every row holds only sines or only cosines.

Must fail: values, hidden_values

Source: https://github.com/BrianPulfer/PapersReimplementations/issues/9
The issue reports that the DDPM notebook's sinusoidal_embedding is not the standard encoding: it applies torch.sin to the rows selected by sin_mask = torch.arange(0, n, 2), i.e. to even positions, and cos to others; the author confirmed the mistake and fixed it.
"""
PATCH = [("pe[:, 0::2] = torch.sin(angle)\n    pe[:, 1::2] = torch.cos(angle)",
          "full = angle.repeat_interleave(2, dim=1)                                        # (L, d_model)\n"
          "    pe[:] = torch.where((torch.arange(seq_len) % 2 == 0)[:, None], torch.sin(full), torch.cos(full))")]
