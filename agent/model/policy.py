"""How one run decodes: which weights answer each role, which roles sample and at what temperature,
the run's seed and the completion cap. One frozen value, passed down whole, so no layer between the
command line and the model re-threads its parts.

    policy = RunPolicy(adapter=AdapterChoice.named("grpo-0003", roles=frozenset({"planner"})),
                       temperature=0.8, sampled_roles=frozenset({"planner"}), seed=7)
    policy.adapter_for("writer")      # "" → the base model (the adapter was not trained for the writer)
    policy.temperature_for("writer")  # 0.0 → greedy (only the planner samples)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from .base import BASE_MODEL


class AdapterMode(StrEnum):
    ACTIVE = "active"  # whatever the model serves by default (its active adapter, or none)
    BASE = "base"  # the base weights, even when an adapter is active
    NAMED = "named"  # one adapter, by name


@dataclass(frozen=True)
class AdapterChoice:
    """Which weights answer. A named adapter may be scoped: it answers only for the roles it was
    trained for (`roles`; None = every role), the others get the base model — training the writer
    must not change what the planner does, since they share the weights."""

    mode: AdapterMode = AdapterMode.ACTIVE
    name: str = ""
    roles: frozenset[str] | None = None

    @classmethod
    def active(cls) -> AdapterChoice:
        return cls(AdapterMode.ACTIVE)

    @classmethod
    def base(cls) -> AdapterChoice:
        return cls(AdapterMode.BASE)

    @classmethod
    def named(cls, name: str, roles: frozenset[str] | None = None) -> AdapterChoice:
        if not name:
            raise ValueError("a named adapter needs a name (use AdapterChoice.base() for the base model)")
        return cls(AdapterMode.NAMED, name, frozenset(roles) if roles is not None else None)

    @property
    def label(self) -> str | None:
        """The adapter's name for records and manifests (None unless one is named)."""
        return self.name if self.mode is AdapterMode.NAMED else None

    def trained_for(self, role: str) -> bool:
        """Whether this is a named adapter whose scope names `role`: a decision the rules make better than the
        base model (agent/graph/scoring.py) is handed to the model only by an adapter trained for it."""
        return self.mode is AdapterMode.NAMED and self.roles is not None and role in self.roles

    def request(self, role: str) -> str | None:
        """The `adapter` field of one role's request: None = the model's active one, "" = the base model."""
        if self.mode is AdapterMode.ACTIVE:
            return None
        if self.mode is AdapterMode.BASE or (self.roles is not None and role not in self.roles):
            return BASE_MODEL
        return self.name


@dataclass(frozen=True)
class RunPolicy:
    """Decoding of one run. `sampled_roles`: only these roles sample at `temperature`, the others decode
    greedily (None = every role samples). `seed` is the run's seed; each call's seed is derived from it
    and the call's identity (agent/graph/context.py)."""

    adapter: AdapterChoice = AdapterChoice()
    temperature: float = 0.0
    sampled_roles: frozenset[str] | None = None
    seed: int | None = None
    max_tokens: int = 384

    def adapter_for(self, role: str) -> str | None:
        return self.adapter.request(role)

    def temperature_for(self, role: str) -> float:
        sampled = self.sampled_roles is None or role in self.sampled_roles
        return self.temperature if sampled else 0.0

    def with_seed(self, seed: int | None) -> RunPolicy:
        return replace(self, seed=seed)

    def snapshot(self) -> dict[str, Any]:
        """What a run's settings record about how it decoded (JSON-ready)."""
        return {
            "adapter": self.adapter.label, "adapter_mode": self.adapter.mode.value,
            "adapter_scope": sorted(self.adapter.roles) if self.adapter.roles is not None else None,
            "temperature": self.temperature,
            "sampled_roles": sorted(self.sampled_roles) if self.sampled_roles is not None else None,
            "seed": self.seed, "max_tokens": self.max_tokens,
        }
