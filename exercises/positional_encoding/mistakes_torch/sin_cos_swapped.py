"""sin and cos were swapped: PE[:, 2i] is the sin and PE[:, 2i+1] the cos.

Must fail: values
"""
PATCH = [('pe[:, 0::2] = torch.sin(angle)', 'pe[:, 0::2] = torch.cos(angle)'), ('pe[:, 1::2] = torch.cos(angle)', 'pe[:, 1::2] = torch.sin(angle)')]
