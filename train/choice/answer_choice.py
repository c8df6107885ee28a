"""Answer-choice training: the re-ranker's pick among candidate answers, learned from the outcome.

The graph answers with the best of a few candidate spans of its evidence (agent/graph/scoring.py):

    s(c) = f(c) + mean_t log π(c_t | TEMPLATE(sentence(c), q), c_<t)        f: the feature score

f is the reader's: its features and how much of the question the candidate's unit covers
(agent/reader/trust/ranking.py); trainer.py builds the sets with the same f.

Read the pick as a policy over the K candidates, p(c) = softmax_c s(c). On a question with a gold answer
the outcome of every candidate is known without running anything (R(c) = 1 when c matches the gold), so
the expected outcome needs no sampling, and the objective is its log, exactly:

    J(q) = log E_{c~p}[R(c)] = log Σ_{c: R(c)=1} p(c)                     (maximum marginal likelihood)
    ∇J   = E_{c~p(·|R=1)}[∇s(c)] − E_{c~p}[∇s(c)]

which is REINFORCE's ∇E[R] divided by E[R]: it does not fade while the gold candidate is still unlikely,
which is when the credit is needed (correct picks are rare: ~12 % of questions at the start). Questions
with no correct candidate carry no signal and are left out. Only π's LoRA adapter learns; f is fixed.

R may also be graded (`credit="f1"`: a candidate's token F1 against the gold, so "Lee County" earns 0.8 of
"Lee County, Mississippi"). J = log Σ_c p(c) R(c) is then the log of the expected F1, its gradient weighs
each candidate by p(c) R(c) / E[R], and a question whose pool holds only part of the gold still teaches.

The adapter answers for the re-ranker only (role ANSWER_ROLE): the planner, extractor and writer keep
their weights. On this CPU the cost is the forward + backward of K rows of ~70 tokens per question.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import torch
from deepresearch.agent.graph.events import AnswerScored, ScoredCandidate, read_events
from deepresearch.agent.reader import ANSWER_ROLE, EMPTY_LIKELIHOOD, LIKELIHOOD_WEIGHT, TEMPLATE, Candidate
from deepresearch.evals.scoring.metrics import f1, normalize_answer

if TYPE_CHECKING:
    from deepresearch.agent.trace.store import TraceStore


Credit = Literal["exact", "f1"]


@dataclass(frozen=True)
class ChoiceExample:
    """One question's candidates (text, the sentence it came from, feature score) and which are correct;
    `template` is the prompt each candidate is scored after (the re-ranker's, or another decision's);
    `credit`, when set, each candidate's graded outcome in [0, 1] (else R = 1 for the correct ones)."""

    question: str
    candidates: tuple[tuple[str, str, float], ...]
    correct: tuple[bool, ...]
    template: str = TEMPLATE
    credit: tuple[float, ...] | None = None

    @classmethod
    def of(cls, question: str, candidates: Sequence[Candidate], answers: Iterable[str],
           credit: Credit = "exact") -> ChoiceExample:
        answers = list(answers)
        golds = {normalize_answer(a) for a in answers} - {""}
        graded = tuple(f1(c.text, answers, yes_no=False) for c in candidates) if credit == "f1" else None
        return cls(question, tuple((c.text, c.quote, c.score) for c in candidates),
                   tuple(normalize_answer(c.text) in golds for c in candidates), credit=graded)

    @classmethod
    def logged(cls, question: str, candidates: Sequence[ScoredCandidate],
               answers: Iterable[str]) -> ChoiceExample | None:
        """From a run's re-ranker event (AnswerScored.candidates); None when a candidate lacks its sentence
        (traces written before the event carried it): the score cannot be recomputed."""
        if any(not c.quote for c in candidates):
            return None
        golds = {normalize_answer(a) for a in answers} - {""}
        return cls(question, tuple((c.text, c.quote, c.features) for c in candidates),
                   tuple(normalize_answer(c.text) in golds for c in candidates))

    @property
    def rewards(self) -> tuple[float, ...]:
        """R(c) per candidate: the graded credit, else 1 for a correct candidate and 0 for the others."""
        return self.credit if self.credit is not None else tuple(float(c) for c in self.correct)

    @property
    def learnable(self) -> bool:
        return len(self.candidates) > 1 and any(r > 0 for r in self.rewards)


def write_choice_examples(examples: Iterable[ChoiceExample], path: Path) -> None:
    """JSON, for the update process `accelerate launch` starts (update/launch.py)."""
    path.write_text(json.dumps([asdict(ex) for ex in examples]))


def read_choice_examples(path: Path) -> list[ChoiceExample]:
    return [ChoiceExample(d["question"], tuple(tuple(c) for c in d["candidates"]), tuple(d["correct"]),
                          d.get("template", TEMPLATE), tuple(d["credit"]) if d.get("credit") is not None else None)
            for d in json.loads(path.read_text())]


def logged_examples(store: TraceStore, runs: Iterable[tuple[str, str, Sequence[str]]]) -> list[ChoiceExample]:
    """The learnable candidate sets the re-ranker logged in these runs ((run id, question, gold answers)), once
    each: a group's runs often gather the same evidence, and a set counted G times would weigh G times."""
    seen: dict[tuple, ChoiceExample] = {}
    for run_id, question, answers in runs:
        if not answers:
            continue
        for event in read_events(store, run_id, AnswerScored):
            ex = ChoiceExample.logged(question, event.candidates, answers)
            if ex is not None and ex.learnable:
                seen.setdefault((ex.question, ex.candidates), ex)
    return list(seen.values())


class ChoiceScorer:
    """s(c) for every candidate of an example, differentiable through the policy's LoRA adapter. Prompt and
    continuation are tokenised apart, as `ChatModel.score` does, so training and serving agree.

    Candidates of one sentence share its prompt, so they are packed into one row: the prompt once, then each
    continuation with its own positions (restarting after the prompt) and an attention mask that lets it see
    the prompt and itself only. That is exactly the separate rows' computation, at the prompt's cost once per
    sentence instead of once per candidate (20 candidates come from ~8 sentences). The vocabulary projection
    runs only on the positions that predict a continuation token."""

    def __init__(self, policy: torch.nn.Module, tokenizer, pad_id: int = 0,
                 autocast: Callable[[], AbstractContextManager] = nullcontext):
        self.policy, self.tokenizer, self.pad_id = policy, tokenizer, pad_id
        self.autocast = autocast  # the trainer's mixed precision (accelerate's autocast on a GPU), forward only

    @classmethod
    def load(cls, model_dir: Path, adapter: Path | None = None, seed: int = 0) -> ChoiceScorer:
        """The model in `model_dir` with a trainable LoRA adapter (`adapter`'s, or a fresh one initialised from
        `seed`), in eval mode: how the answer-choice script and its probes start."""
        from transformers import PreTrainedTokenizerFast

        from ..config import LoraSettings
        from ..policy import load_policy

        policy = load_policy(model_dir, LoraSettings(), adapter, seed)
        policy.eval()
        return cls(policy, PreTrainedTokenizerFast.from_pretrained(str(model_dir)),
                   int(policy.config.pad_token_id or 0))

    def _ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def packed_forward(self, example: ChoiceExample, after: Sequence[int] = ()
                       ) -> tuple[torch.Tensor, list[tuple[int, list[int], list[int], int]]]:
        """The last hidden states of the packed rows, and per candidate (row, positions predicting its tokens,
        its tokens, the position of its segment's last token). `after`: token ids appended to every candidate
        in its own segment (read by a probe at that last position; the likelihood never reads them)."""
        by_sentence: dict[str, list[int]] = {}
        for i, (_, sentence, _) in enumerate(example.candidates):
            by_sentence.setdefault(sentence, []).append(i)
        rows: list[tuple[list[int], list[int], list[int]]] = []  # (ids, positions, segment: 0 = the prompt)
        reads: list[tuple[int, list[int], list[int], int]] = [([], [], [], 0)] * len(example.candidates)
        for r, (sentence, members) in enumerate(by_sentence.items()):
            prompt = self._ids(example.template.format(sentence=sentence, question=example.question))
            ids, positions, segment = list(prompt), list(range(len(prompt))), [0] * len(prompt)
            for seg, i in enumerate(members, 1):
                tail = self._ids(" " + example.candidates[i][0])
                # its first token is predicted by the prompt's last position, the rest by its own tokens
                reads[i] = (r, [len(prompt) - 1, *range(len(ids), len(ids) + len(tail) - 1)], tail,
                            len(ids) + len(tail) + len(after) - 1)
                ids += [*tail, *after]
                positions += range(len(prompt), len(prompt) + len(tail) + len(after))
                segment += [seg] * (len(tail) + len(after))
            rows.append((ids, positions, segment))
        width = max(len(ids) for ids, _, _ in rows)
        ids_t = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        pos_t = torch.zeros((len(rows), width), dtype=torch.long)
        seg_t = torch.full((len(rows), width), -1, dtype=torch.long)  # −1: padding, seen by padding only
        for r, (ids, positions, segment) in enumerate(rows):
            ids_t[r, : len(ids)], pos_t[r, : len(ids)], seg_t[r, : len(ids)] = (
                torch.tensor(ids), torch.tensor(positions), torch.tensor(segment))
        device = next(self.policy.parameters()).device
        ids_t, pos_t, seg_t = ids_t.to(device), pos_t.to(device), seg_t.to(device)
        causal = torch.ones(width, width, dtype=torch.bool, device=device).tril()
        sees = (seg_t[:, :, None] == seg_t[:, None, :]) | (seg_t[:, None, :] == 0)  # own segment or the prompt
        mask = (causal & sees)[:, None]  # (rows, 1, query, key), True = attend
        with self.autocast():
            hidden = self.causal_lm.model(input_ids=ids_t, attention_mask=mask, position_ids=pos_t).last_hidden_state
        return hidden, reads

    @property
    def causal_lm(self) -> torch.nn.Module:
        return self.policy.get_base_model() if hasattr(self.policy, "get_base_model") else self.policy

    def log_probs(self, hidden: torch.Tensor) -> torch.Tensor:
        """log π over the vocabulary at the given hidden states."""
        with self.autocast():
            return torch.log_softmax(self.causal_lm.lm_head(hidden).float(), -1)

    def likelihoods(self, hidden: torch.Tensor, reads: Sequence[tuple[int, list[int], list[int], int]]
                    ) -> list[torch.Tensor]:
        """Each candidate's mean log-likelihood (EMPTY_LIKELIHOOD for one that tokenises to nothing)."""
        out: list[torch.Tensor] = []
        for r, predicting, targets, _ in reads:
            if not targets:
                out.append(torch.tensor(EMPTY_LIKELIHOOD, device=hidden.device))
                continue
            logp = self.log_probs(hidden[r, predicting])
            out.append(logp.gather(-1, torch.tensor(targets, device=hidden.device)[:, None]).mean())
        return out

    def scores(self, example: ChoiceExample) -> torch.Tensor:
        hidden, reads = self.packed_forward(example)
        features = torch.tensor([score for _, _, score in example.candidates], device=hidden.device)
        return features + LIKELIHOOD_WEIGHT * torch.stack(self.likelihoods(hidden, reads))


def choice_loss(scores: torch.Tensor, rewards: Sequence[float]) -> torch.Tensor:
    """−J = −log Σ_c softmax(scores)_c R(c); with R in {0, 1}, −log Σ_{correct} softmax(scores)."""
    r = torch.tensor([float(x) for x in rewards], dtype=scores.dtype, device=scores.device)
    earning = r > 0
    return torch.logsumexp(scores, 0) - torch.logsumexp(scores[earning] + r[earning].log(), 0)


def backward_choice(scorer: ChoiceScorer, batch: Sequence[ChoiceExample]) -> float:
    """Backpropagates the batch's mean −J through the adapter; returns the summed −J (for logging)."""
    total = 0.0
    for ex in batch:
        loss = choice_loss(scorer.scores(ex), ex.rewards)
        (loss / len(batch)).backward()
        total += loss.item()
    return total


def top1_hits(scorer: ChoiceScorer, examples: Sequence[ChoiceExample]) -> int:
    """Questions whose best-scored candidate is correct (what the graph would answer, at T 0)."""
    return int(sum(top1_rewards(scorer, examples, graded=False)))  # R is 1 / 0 here


def top1_rewards(scorer: ChoiceScorer, examples: Sequence[ChoiceExample], graded: bool = True) -> list[float]:
    """R of each question's best-scored candidate: its graded credit (e.g. F1) where the example has one."""
    with torch.no_grad():
        return [(ex.rewards if graded else ex.correct)[int(torch.argmax(scorer.scores(ex)))]
                for ex in examples if ex.candidates]


@dataclass
class ChoiceTrainStats:
    examples: int
    steps: int
    loss: float
    seconds: float


@dataclass(frozen=True)
class ChoiceTraining:
    """How train_choice steps: AdamW's step size, learnable questions per step, passes over them, the seed of
    their order, and the gradient norm clipped to."""

    lr: float = 3e-4
    batch: int = 4
    epochs: int = 1
    seed: int = 0
    max_grad_norm: float = 1.0


def train_choice(scorer: ChoiceScorer, examples: Sequence[ChoiceExample], how: ChoiceTraining = ChoiceTraining(), *,
                 progress: Callable[[int, int, float], None] | None = None,
                 epoch_end: Callable[[int], None] | None = None) -> ChoiceTrainStats:
    """AdamW on the adapter: one step per `how.batch` learnable questions, the mean of their −J. `epoch_end(n)`
    runs after pass n (from 1) with the policy in eval mode, e.g. to measure or save a checkpoint."""
    lr, batch, epochs, seed = how.lr, how.batch, how.epochs, how.seed
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
            total, seen = total + backward_choice(scorer, chunk), seen + len(chunk)
            torch.nn.utils.clip_grad_norm_(params, how.max_grad_norm)
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


def save_choice_adapter(policy: torch.nn.Module, out: Path, metadata: dict,
                        roles: Sequence[str] = (ANSWER_ROLE,)) -> None:
    """The adapter (peft files) with metadata.json scoping it to the decisions it was trained for."""
    from deepresearch.train.adapters.registry import METADATA_FILE

    out.mkdir(parents=True, exist_ok=True)
    policy.save_pretrained(str(out))
    (out / METADATA_FILE).write_text(json.dumps({**metadata, "roles": list(roles)}, indent=2, default=str))
