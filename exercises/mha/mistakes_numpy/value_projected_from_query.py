"""the values were projected from the query input instead of the value input (query @ W_v, a copy-paste from the query line): right only when query and value are the same tensor; cross-attention raises or attends to the wrong values.

Must fail: cross_attention

Source: https://github.com/tensorflow/tensorflow/pull/35859
The pull request fixes the tf.keras Attention docstring example, where a cut-and-paste error computed value_embeddings from query_input instead of value_input.
"""
PATCH = [("v = (value @ W_v).reshape(B, L_k, H, d_k).transpose(0, 2, 1, 3)", "v = (query @ W_v).reshape(B, L_k, H, d_k).transpose(0, 2, 1, 3)")]
