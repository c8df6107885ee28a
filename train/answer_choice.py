"""Answer-choice training: the re-ranker's pick among candidate answers, learned from the outcome.

The graph answers with the best of a few candidate spans of its evidence (agent/graph/answer_scoring.py):

    s(c) = f(c) + mean_t log π(c_t | TEMPLATE(sentence(c), q), c_<t)        f: the feature score

Read the pick as a policy over the K candidates, p(c) = softmax_c s(c). On a question with a gold answer
the outcome of every candidate is known without running anything (R(c) = 1 when c matches the gold), so
the expected outcome needs no sampling, and the objective is its log, exactly:

    J(q) = log E_{c~p}[R(c)] = log Σ_{c: R(c)=1} p(c)                     (maximum marginal likelihood)
    ∇J   = E_{c~p(·|R=1)}[∇s(c)] − E_{c~p}[∇s(c)]

which is REINFORCE's ∇E[R] divided by E[R]: it does not fade while the gold candidate is still unlikely,
which is when the credit is needed (correct picks are rare: ~12 % of questions at the start). Questions
with no correct candidate carry no signal and are left out. Only π's LoRA adapter learns; f is fixed.

The adapter answers for the re-ranker only (role ANSWER_ROLE): the planner, extractor and writer keep
their weights. On this CPU the cost is the forward + backward of K rows of ~70 tokens per question.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from deepresearch.agent.graph.answer_scoring import ANSWER_ROLE, EMPTY_LIKELIHOOD, LIKELIHOOD_WEIGHT, TEMPLATE
from deepresearch.agent.graph.candidates import Candidate
from deepresearch.evals.metrics import normalize_answer


@dataclass(frozen=True)
class ChoiceExample:
    """One question's candidates (text, the sentence it came from, feature score) and which are correct."""

    question: str
    candidates: tuple[tuple[str, str, float], ...]
    correct: tuple[bool, ...]

    @classmethod
    def of(cls, question: str, candidates: Sequence[Candidate], answers: Iterable[str]) -> ChoiceExample:
        golds = {normalize_answer(a) for a in answers} - {""}
        return cls(question, tuple((c.text, c.quote, c.score) for c in candidates),
                   tuple(normalize_answer(c.text) in golds for c in candidates))

    @property
    def learnable(self) -> bool:
        return len(self.candidates) > 1 and any(self.correct)


class ChoiceScorer:
    """s(c) for every candidate of an example, differentiable through the policy's LoRA adapter. Rows are
    prompt + continuation tokenised apart, as `ChatModel.score` does, so training and serving agree; the
    vocabulary projection runs only on the continuation's positions."""

    def __init__(self, policy: torch.nn.Module, tokenizer, pad_id: int = 0):
        self.policy, self.tokenizer, self.pad_id = policy, tokenizer, pad_id

    def _ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def scores(self, example: ChoiceExample) -> torch.Tensor:
        rows, spans = [], []
        for text, sentence, _ in example.candidates:
            prompt = self._ids(TEMPLATE.format(sentence=sentence, question=example.question))
            tail = self._ids(" " + text)
            rows.append(prompt + tail)
            spans.append((len(prompt), len(tail)))
        width = max(map(len, rows))
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):  # right padding: every row's positions start at 0
            ids[i, : len(row)] = torch.tensor(row)
            mask[i, : len(row)] = 1
        causal_lm = self.policy.get_base_model() if hasattr(self.policy, "get_base_model") else self.policy
        hidden = causal_lm.model(input_ids=ids, attention_mask=mask).last_hidden_state
        likelihood = []
        for i, (n_prompt, n_tail) in enumerate(spans):
            if n_tail == 0:
                likelihood.append(hidden.new_tensor(EMPTY_LIKELIHOOD))
                continue
            logp = torch.log_softmax(causal_lm.lm_head(hidden[i, n_prompt - 1: n_prompt - 1 + n_tail]).float(), -1)
            likelihood.append(logp.gather(-1, ids[i, n_prompt: n_prompt + n_tail, None]).mean())
        features = torch.tensor([score for _, _, score in example.candidates])
        return features + LIKELIHOOD_WEIGHT * torch.stack(likelihood)


def choice_loss(scores: torch.Tensor, correct: Sequence[bool]) -> torch.Tensor:
    """−J = −log Σ_{correct} softmax(scores)."""
    gold = torch.tensor(list(correct), dtype=torch.bool)
    return torch.logsumexp(scores, 0) - torch.logsumexp(scores[gold], 0)


def top1_hits(scorer: ChoiceScorer, examples: Sequence[ChoiceExample]) -> int:
    """Questions whose best-scored candidate is correct (what the graph would answer, at T 0)."""
    with torch.no_grad():
        return sum(ex.correct[int(torch.argmax(scorer.scores(ex)))] for ex in examples if ex.candidates)


@dataclass
class ChoiceTrainStats:
    examples: int
    steps: int
    loss: float
    seconds: float


def train_choice(scorer: ChoiceScorer, examples: Sequence[ChoiceExample], *, lr: float = 3e-4, batch: int = 4,
                 epochs: int = 1, seed: int = 0, max_grad_norm: float = 1.0,
                 progress: Callable[[int, int, float], None] | None = None,
                 epoch_end: Callable[[int], None] | None = None) -> ChoiceTrainStats:
    """AdamW on the adapter: one step per `batch` learnable questions, the mean of their −J. `epoch_end(n)`
    runs after pass n (from 1) with the policy in eval mode, e.g. to measure or save a checkpoint."""
    learnable = [ex for ex in examples if ex.learnable]
    params = [p for p in scorer.policy.parameters() if p.requires_grad]
    if not learnable or not params:
        raise ValueError("nothing to learn: no question has a correct candidate among several, "
                         "or the policy has no trainable (adapter) parameters")
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    rng = random.Random(seed)
    scorer.policy.train()
    start, steps, total, seen = time.perf_counter(), 0, 0.0, 0
    for epoch in range(1, epochs + 1):
        order = list(learnable)
        rng.shuffle(order)
        for first in range(0, len(order), batch):
            chunk = order[first: first + batch]
            for ex in chunk:
                loss = choice_loss(scorer.scores(ex), ex.correct)
                (loss / len(chunk)).backward()
                total, seen = total + loss.item(), seen + 1
            torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            steps += 1
            if progress:
                progress(seen, len(order) * epochs, total / seen)
        if epoch_end:
            scorer.policy.eval()
            epoch_end(epoch)
            scorer.policy.train()
    scorer.policy.eval()
    return ChoiceTrainStats(len(learnable), steps, total / max(seen, 1), time.perf_counter() - start)


def save_choice_adapter(policy: torch.nn.Module, out: Path, metadata: dict) -> None:
    """The adapter (peft files) with metadata.json scoping it to the re-ranker."""
    from deepresearch.train.registry import METADATA_FILE

    out.mkdir(parents=True, exist_ok=True)
    policy.save_pretrained(str(out))
    (out / METADATA_FILE).write_text(json.dumps({**metadata, "roles": [ANSWER_ROLE]}, indent=2, default=str))
