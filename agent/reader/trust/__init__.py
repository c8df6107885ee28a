"""Whether an answer can be given: is its unit about the question, and how likely is it right."""
