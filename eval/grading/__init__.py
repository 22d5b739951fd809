"""Grading answers: execution scoring against gold SQL, the LLM answer judge, predictions files."""
