"""The words of questions and evidence: spans of each kind, what a question asks for, crude stems."""
