"""rows that see no key give NaN: the max of an all -inf row is -inf and exp(-inf - (-inf)) is NaN, or, shifted by 0 instead, the exponentials sum to 0 and the division is 0/0; such a row must give 0 (guard the max and the division by a zero sum).

Must fail: fully_masked_rows
"""
PATCH = [
    ('    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # rows that see no key\n',
     ''),
]
