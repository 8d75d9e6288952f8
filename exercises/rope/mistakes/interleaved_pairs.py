"""this is the interleaved-pair layout of RoFormer, Meta's LLaMA and GPT-J (features 2i and 2i+1 rotated together); this exercise asks for rotate_half (GPT-NeoX / Hugging Face LLaMA): feature i pairs with feature i + d/2.

Must fail: values
"""
PATCH = [('emb = torch.cat([theta, theta], dim=-1)', 'emb = theta.repeat_interleave(2, dim=-1)'), ('x1, x2 = xw[..., : d // 2], xw[..., d // 2:]', 'x1, x2 = xw[..., 0::2], xw[..., 1::2]'), ('rotated = torch.cat([-x2, x1], dim=-1)', 'rotated = torch.stack([-x2, x1], dim=-1).flatten(-2)')]
