"""Solved examples: the global example index, a database's own examples, question/SQL skeletons."""
