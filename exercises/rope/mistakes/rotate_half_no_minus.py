"""rotate_half lost its minus sign: it returned [x2, x1], which makes a reflection, not a rotation; rotate_half([x1, x2]) is [-x2, x1].

Must fail: values, relative_position
"""
PATCH = [('rotated = torch.cat([-x2, x1], dim=-1)', 'rotated = torch.cat([x2, x1], dim=-1)')]
