"""How an eval runs: each system (closed-book, retrieve-then-read, the graph) on each question, recorded and
resumable, with its manifest."""
