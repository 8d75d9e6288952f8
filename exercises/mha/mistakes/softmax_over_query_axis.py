"""the softmax was taken over the query axis (dim=-2) instead of the key axis (dim=-1).

Must fail: self_attention
"""
PATCH = [("att = torch.where(keep, F.softmax(att, dim=-1), 0.0)", "att = torch.where(keep, F.softmax(att, dim=-2), 0.0)"),
         ("att = F.softmax(att, dim=-1)      ", "att = F.softmax(att, dim=-2)      ")]
