"""adjacent features (2i, 2i+1) were rotated as pairs while the angle table was tiled [theta, theta] (as rotate_half needs): the two conventions were mixed, so the features of a pair are rotated by different angles. This exercise pairs feature i with feature i + d/2 (rotate_half) using the tiled table.

Must fail: values, hidden_values

Source: https://github.com/facebookresearch/vjepa2/pull/15
The pull request shows rotate_queries_or_keys expanding the sin/cos table with .repeat(1, 1, 1, 2) (tiled) while rotating adjacent coordinate pairs, and calls it "a subtle bug".
"""
PATCH = [('rotated = np.concatenate([-xw[..., d // 2:], xw[..., : d // 2]], axis=-1)',
          'rotated = np.stack([-xw[..., 1::2], xw[..., 0::2]], axis=-1).reshape(xw.shape)')]
