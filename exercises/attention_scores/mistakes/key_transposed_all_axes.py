"""the key was transposed with .T (np.transpose without axes), which reverses every axis of a batched key ((B, L_k, d_k) becomes (d_k, L_k, B)) instead of swapping the last two: batched inputs raise or mix batches; use np.swapaxes(key, -1, -2).

Must fail: weights_basic, output_basic

Source: https://github.com/flrngel/Self-Attentive-tensorflow/issues/3
The issue shows model.py calling tf.transpose(H) on an H of shape [batch_size, n, 2u], which gives [2u, n, batch_size] instead of [batch_size, 2u, n] (perm=[0, 2, 1]); the author agreed.
"""
PATCH = [("scores = query @ np.swapaxes(key, -1, -2) / math.sqrt(d_k)", "scores = query @ key.T / math.sqrt(d_k)")]
