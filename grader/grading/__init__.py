"""One submission: exercise loading, grade_submission, scorecard, API rules, artifacts, terminal rendering."""
