"""Host-side verdicts: compare, tolerance, judges, verdicts, probes, op audit."""
