"""What an eval writes: report.md and summary.json, two evals compared, plots."""
