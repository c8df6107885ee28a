"""What an eval asks: question sets (a QA file, the bundled demo, a folder of a person's own files, questions made
unanswerable) and their corpora."""
