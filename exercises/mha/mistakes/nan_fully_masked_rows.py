"""masked scores were filled with -inf and nothing else, so a query row whose keys are all masked becomes NaN (0/0); such a row must give weights 0 and output 0.

Must fail: fully_masked_rows
"""
PATCH = [("att.masked_fill(~keep, torch.finfo(att.dtype).min)", "att.masked_fill(~keep, float('-inf'))"),
         ("att = torch.where(keep, F.softmax(att, dim=-1), 0.0)", "att = F.softmax(att, dim=-1)")]
