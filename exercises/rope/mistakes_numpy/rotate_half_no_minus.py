"""rotate_half lost its minus sign: it returned [x2, x1], which makes a reflection, not a rotation; rotate_half([x1, x2]) is [-x2, x1].

Must fail: values, relative_position
"""
PATCH = [('rotated = np.concatenate([-xw[..., d // 2:], xw[..., : d // 2]], axis=-1)', 'rotated = np.concatenate([xw[..., d // 2:], xw[..., : d // 2]], axis=-1)')]
