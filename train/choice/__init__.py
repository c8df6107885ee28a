"""The choice losses: the policy learns to pick among candidates the graph offers (the answer re-ranker's
spans, the follow-up hop's bridge names), with the exact loss −log Σ_correct softmax s.

answer_choice.py is the loss and its scorer; bridge_examples.py the bridge hop's sets; simulated_evidence.py
gathers evidence as the graph does, without the graph, so a QA set's questions become candidate sets fast.
trainer.py trains an adapter on those sets (`deepresearch train choices`: how the starter adapter's parts
were made); ranker.py fits the candidates' feature weights the same way (`deepresearch build ranker`).
"""
