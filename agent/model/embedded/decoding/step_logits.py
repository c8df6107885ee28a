"""A step's logits, with the vocabulary projection left out where the grammar leaves a row a few tokens.

A "verified" draft of a string the grammar forces (jump_forward.py) is checked position by position, and at
each such position the grammar allows only the tokens that spell a prefix of what is left of that string: 3 at
the median and 43 at most over the 41 recorded agent calls. Computing all 49,152 logits there was most of a
step's vocabulary projection: ~1,900 of the ~2,300 drafted columns of a batch-8 replay of those calls
(dev/results/bench-cheaper-steps/). For such columns (`few`) the pass keeps the final hidden state instead,
and the engine, once it has the grammar's mask, asks for the logits of the allowed tokens alone; every other
logit is -inf, as the mask would have made it. The logits, log-probabilities and draws are those of the whole
projection up to the rounding of a 576-long dot product.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .grammar import RowGrammar, allowed_tokens, apply_mask, mask_row

# More allowed tokens than this (a forced string's last token may run on into free text): the column's whole
# row of logits, from its hidden state.
FEW_CHOICES = 256

Project = Callable[[torch.Tensor], torch.Tensor]  # final hidden states [n, dim] → logits [n, vocab]


class StepLogits:
    """The logits of a step's last `keep` columns [rows, keep, vocab], except the `few` columns, whose final
    hidden states are kept to be projected on the tokens asked for."""

    def __init__(self, logits: torch.Tensor, few: torch.Tensor | None = None, hidden: torch.Tensor | None = None,
                 weight: torch.Tensor | None = None, project: Project | None = None) -> None:
        """`few` [rows, keep] bool; `hidden` [few.sum(), dim], their final (normed) hidden states in row-major
        order; `weight` the vocabulary matrix [vocab, dim]; `project` the whole projection of hidden states."""
        self.logits = logits
        self._hidden = hidden
        self._weight = weight
        self._project = project
        self._few: dict[tuple[int, int], int] = {}
        if few is not None:
            self._few = {(int(r), int(c)): n for n, (r, c) in enumerate(few.nonzero().tolist())}

    @property
    def vocab(self) -> int:
        return self.logits.shape[-1]

    def is_few(self, row: int, column: int) -> bool:
        return (row, column) in self._few

    def column(self, row: int, column: int) -> torch.Tensor:
        """All of a column's logits, fp32 [vocab] (a new tensor when projected here)."""
        if not self.is_few(row, column):
            return self.logits[row, column].float()
        assert self._hidden is not None and self._project is not None
        return self._project(self._hidden[self._few[row, column]].unsqueeze(0))[0].float()

    def of_tokens(self, row: int, column: int, tokens: torch.Tensor) -> torch.Tensor:
        """A few column's logits of `tokens` ([n] ids), -inf for every other token, fp32 [vocab]."""
        assert self._hidden is not None and self._weight is not None
        out = torch.full((self.vocab,), float("-inf"))
        out[tokens] = self._weight.index_select(0, tokens) @ self._hidden[self._few[row, column]]
        return out


def few_columns(forced_drafts: list[int], keep: int) -> torch.Tensor | None:
    """[rows, keep] bool: the columns that check row i's draft of `forced_drafts[i]` forced tokens (0: none), the
    ones before its last column; None when no row has such a draft."""
    if not any(forced_drafts):
        return None
    few = torch.zeros((len(forced_drafts), keep), dtype=torch.bool)
    for i, drafted in enumerate(forced_drafts):
        few[i, keep - 1 - drafted : keep - 1] = True
    return few


def masked_column(step: StepLogits, row: int, column: int, grammar: RowGrammar, bitmask: torch.Tensor) -> torch.Tensor:
    """Column `column` of row `row`'s logits, fp32 [vocab], masked by the row's grammar (row `row` of the bitmask);
    only the allowed tokens projected where the column is a few one and they are few."""
    if not step.is_few(row, column):
        logits = step.column(row, column)
        mask_row(logits, grammar, bitmask, row)
        return logits
    grammar.fill_mask(bitmask, row)
    allowed = allowed_tokens(bitmask[row], step.vocab)
    if len(allowed) <= FEW_CHOICES:
        return step.of_tokens(row, column, allowed)
    logits = step.column(row, column)
    apply_mask(logits, bitmask, row)
    return logits
