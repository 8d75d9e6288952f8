"""the frequency factor was written -log(10000) / d_model // 2, which Python reads as (-log(10000) / d_model) // 2, a whole negative number (-1 for d_model >= 5): every frequency became exp(-2i) instead of 10000^(-2i/d_model); parenthesise the divisor.

Must fail: values, hidden_values

Source: https://github.com/zju3dv/LoFTR/issues/41
The report shows LoFTR's position_encoding.py computing div_term = torch.exp(torch.arange(0, d_model//2, 2).float() * (-math.log(10000.0) / d_model//2)), which ends up as -1.0; the authors confirmed and retrained.
"""
PATCH = [('inv_freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)',
          'inv_freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model // 2))'),
         ('import torch', 'import math\n\nimport torch')]
