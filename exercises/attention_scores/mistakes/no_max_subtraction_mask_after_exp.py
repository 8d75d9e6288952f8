"""exp was taken of the raw scores, without subtracting each row's maximum first, and the mask multiplied in after exp: large scores overflow to inf, and inf times a masked 0 gives NaN weights.

Must fail: large_logits, hidden_cases

The look-alike of ``no_max_subtraction`` (which fills masked scores with -inf before exp, so a
masked key gives exp(-inf) = 0, never inf * 0): the two differ wherever a masked score overflows.
"""
PATCH = [("        scores = np.where(allowed, scores, -np.inf)                 # (..., L_q, L_k)\n"
          "    return _softmax_last(scores).astype(query.dtype, copy=False)",
          "        e = np.exp(scores) * allowed                                # (..., L_q, L_k)\n"
          "    else:\n"
          "        e = np.exp(scores)\n"
          "    s = np.sum(e, axis=-1, keepdims=True)\n"
          "    return np.divide(e, s, out=np.zeros_like(e), where=s > 0).astype(query.dtype, copy=False)")]
