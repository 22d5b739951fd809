"""Reporting runs: metrics and reports, cost and step breakdowns, comparisons, MLflow tracking."""
