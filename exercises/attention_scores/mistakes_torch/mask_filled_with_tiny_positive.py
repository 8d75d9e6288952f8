"""masked keys kept a score of about 0 instead of -inf (as when the fill is 1e-9, the minus sign of -1e9 lost, or 0, or the scores are multiplied by the mask): a masked key gets weight exp(0) like a score of zero, so it still takes part in every masked row.

Must fail: mask_2d, mask_padding, mask_4d

Source: https://github.com/awslabs/gluonts/pull/1401
The pull request fixes the TFT attention, which filled the masked scores with 1e-9 instead of -1e9 ("Mask with 1e-9 make no sense").
"""
PATCH = [('scores = scores.masked_fill(~allowed, float("-inf"))', 'scores = scores.masked_fill(~allowed, 1e-9)')]
