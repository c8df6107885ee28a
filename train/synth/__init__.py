"""Questions with answers known by construction, synthesized from any corpus's documents (no gold answers needed).

corpus.py (the documents and their search) → facts.py, tables.py, prose.py (a unit's answer spans and the questions
that ask for them) → chains.py (two documents: two-hop chains and comparisons) → candidates.py (every kind, lazily)
→ filters.py (what keeps a question, counted) → synthesize.py (quotas, held-out documents, the dev split, the
served corpus). runs.py and feed.py: the same over the sources logged runs read (`train --from-runs`).
model_writer.py: the policy model as the question's writer instead of the templates (measured, not the default).
"""
