"""scores were scaled by 1/sqrt(d_v), the width of the values, instead of 1/sqrt(d_k), the width of the queries and keys (the two differ whenever value.shape[-1] != query.shape[-1]).

Must fail: cross_lengths

Scaled dot-product attention divides by sqrt(d_k) (Vaswani et al. 2017, eq. 1). The patch passes the
value width to the scores of ``scaled_dot_product_attention`` only; ``compute_attention_scores``
has no value and stays right, as in the candidates who make this mistake.
"""
PATCH = [("def compute_attention_scores(query: np.ndarray, key: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:",
          "def compute_attention_scores(query: np.ndarray, key: np.ndarray, mask: np.ndarray | None = None,\n"
          "                             _width: int | None = None) -> np.ndarray:"),
         ("d_k = query.shape[-1]\n", "d_k = query.shape[-1] if _width is None else _width\n"),
         ("weights = compute_attention_scores(query, key, mask) ", "weights = compute_attention_scores(query, key, mask, value.shape[-1]) ")]
