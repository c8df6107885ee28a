"""How answers are scored: EM/F1 and the citation metrics per question, aggregated with bootstrap intervals; the
coverage-precision curve; the report judge."""
