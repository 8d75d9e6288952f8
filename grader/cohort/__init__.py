"""Many submissions: batch, review, report, exports, plots, selfcheck, progress."""
