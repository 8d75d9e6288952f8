"""rows that see no key give NaN: the max of an all -inf row is -inf and exp(-inf - (-inf)) is NaN; such a row must give 0 (guard the max and the division by a zero sum).

Must fail: fully_masked_rows
"""
PATCH = [
    ('    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # rows that see no key\n',
     ''),
]
