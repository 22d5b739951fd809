"""Command-line entry points of the evaluation layer: eval, score, report, index, demo, cheatsheet."""
