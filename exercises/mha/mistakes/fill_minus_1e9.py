"""masked scores were filled with -1e9 and the softmax taken as is: a query row whose keys are all masked gets uniform weights in float32 and NaN in float16 (-1e9 overflows to -inf); such a row must give weights 0 and output 0.

Must fail: fully_masked_rows
"""
PATCH = [("att.masked_fill(~keep, torch.finfo(att.dtype).min)", "att.masked_fill(~keep, -1e9)"),
         ("att = torch.where(keep, F.softmax(att, dim=-1), 0.0)", "att = F.softmax(att, dim=-1)")]
