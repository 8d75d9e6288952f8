"""a query row whose keys are all masked became NaN (its scores are all -inf: with that max, exp(-inf - (-inf)) is NaN; shifted by 0 instead, the exponentials sum to 0 and the division is 0/0); such a row must give weights 0 and output 0.

Must fail: fully_masked_rows
"""
PATCH = [("att.masked_fill(~keep, torch.finfo(att.dtype).min)", "att.masked_fill(~keep, float('-inf'))"),
         ("att = torch.where(keep, F.softmax(att, dim=-1), 0.0)", "att = F.softmax(att, dim=-1)")]
