"""Exercise `positional_encoding`, PyTorch track: sinusoidal positional encoding.

Read the full statement with `grade show positional_encoding --track torch`. Grade your work with
`grade submit positional_encoding THIS_FILE --track torch`.
"""

import torch


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    """Sinusoidal positional encoding (Vaswani et al. 2017), interleaved sin/cos.

    Args:
        seq_len: number of positions (rows), an int >= 0 (else raise ValueError).
        d_model: model width (columns), an even int (odd: raise ValueError).
        offset: position of row 0, an int >= 0 (else raise ValueError).

    Returns:
        (seq_len, d_model) float32 torch.Tensor. Row r encodes position p = offset + r:
        PE[r, 2i] = sin(p / 10000^(2i/d_model)), PE[r, 2i+1] = cos(p / 10000^(2i/d_model)).
        Positions up to 10^6 must be right to float32 rounding: form the angles in float64.
    """
    raise NotImplementedError("implement sinusoidal_positional_encoding")
