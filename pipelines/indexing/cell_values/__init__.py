"""Cell values: which values a database's cell index holds, the index itself, question n-grams."""
