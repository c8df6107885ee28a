"""The run policy: the three meanings of an adapter value, role scoping, sampled roles, and the policy
`ask` and the TUI answer with."""

from __future__ import annotations

import json

import pytest
from deepresearch.agent.model.base import BASE_MODEL
from deepresearch.agent.model.policy import AdapterChoice, AdapterMode, RunPolicy


def test_an_adapter_choice_says_which_weights_answer_each_role():
    assert AdapterChoice.active().request("planner") is None  # the model's active adapter
    assert AdapterChoice.base().request("planner") == BASE_MODEL
    assert AdapterChoice.named("grpo-0001").request("writer") == "grpo-0001"
    scoped = AdapterChoice.named("grpo-0001", roles=frozenset({"planner"}))
    assert scoped.request("planner") == "grpo-0001" and scoped.request("writer") == BASE_MODEL
    assert (AdapterChoice().mode, AdapterChoice.active().label, scoped.label) == (AdapterMode.ACTIVE, None, "grpo-0001")
    with pytest.raises(ValueError):
        AdapterChoice.named("")


def test_only_an_adapter_that_names_a_role_counts_as_trained_for_it():
    assert AdapterChoice.named("choice-0002", roles=frozenset({"answer", "bridge"})).trained_for("bridge")
    assert not AdapterChoice.named("choice-0001", roles=frozenset({"answer"})).trained_for("bridge")
    assert not AdapterChoice.named("grpo-0001").trained_for("bridge")  # unscoped: answers for it, not trained for it
    assert not AdapterChoice.active().trained_for("bridge") and not AdapterChoice.base().trained_for("bridge")


def test_only_the_sampled_roles_sample_and_the_policy_is_frozen():
    policy = RunPolicy(temperature=0.7, sampled_roles=frozenset({"planner"}), seed=3)
    assert (policy.temperature_for("planner"), policy.temperature_for("writer")) == (0.7, 0.0)
    assert RunPolicy(temperature=0.7).temperature_for("writer") == 0.7
    assert policy.with_seed(9).seed == 9 and policy.seed == 3
    with pytest.raises(AttributeError):
        policy.seed = 4  # type: ignore[misc]
    snapshot = policy.snapshot()
    assert snapshot["sampled_roles"] == ["planner"] and snapshot["adapter_mode"] == "active"
    json.dumps(snapshot)


def test_ask_and_the_tui_answer_with_the_configured_adapter_scoped_as_trained(tmp_path):
    from deepresearch.app.runtime import answering_policy
    from deepresearch.app.settings import load_settings

    settings = load_settings(data_dir=tmp_path)
    assert answering_policy(settings).adapter == AdapterChoice.active()
    folder = settings.paths.adapters / "grpo-0002"
    folder.mkdir(parents=True)
    (folder / "metadata.json").write_text(json.dumps({"roles": ["planner"]}))
    model = settings.model.model_copy(update={"adapter": "grpo-0002", "temperature": 0.3})
    policy = answering_policy(settings.model_copy(update={"model": model}))
    assert policy.adapter == AdapterChoice.named("grpo-0002", frozenset({"planner"}))
    assert policy.temperature == 0.3 and policy.max_tokens == settings.model.max_tokens
    base = settings.model_copy(update={"model": settings.model.model_copy(update={"adapter": ""})})
    assert answering_policy(base).adapter == AdapterChoice.base()
