"""The adapter registry: names, current, the rollback stack, metadata."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deepresearch.train.adapters.registry import AdapterRegistry, RegistryError


def fake_adapter_dir(root: Path, name: str, created: str) -> None:
    """An adapter directory as the trainer writes it (config + metadata); weights are not read here."""
    (root / name).mkdir(parents=True)
    (root / name / "adapter_config.json").write_text("{}")
    (root / name / "metadata.json").write_text(json.dumps({"created_at": created, "step": 1,
                                                           "rewards": {"reward_mean": 0.5}}))


@pytest.fixture
def registry(tmp_path: Path) -> AdapterRegistry:
    for i, name in enumerate(["grpo-0001", "grpo-0002", "grpo-0003"]):
        fake_adapter_dir(tmp_path, name, f"2025-01-0{i + 1}")
    return AdapterRegistry(tmp_path)


def test_names_in_creation_order_and_next_name(registry):
    assert registry.names() == ["grpo-0001", "grpo-0002", "grpo-0003"]
    assert registry.next_name("grpo") == "grpo-0004"
    assert registry.next_name("other") == "other-0001"


def test_use_and_rollback_walk_back_through_what_was_served(registry):
    assert registry.current is None
    registry.set_current("grpo-0001", "publish")
    registry.set_current("grpo-0003", "use")
    assert AdapterRegistry(registry.root).current == "grpo-0003"  # persisted: what `ask` loads at start-up
    assert [a.name for a in registry.list() if a.current] == ["grpo-0003"]
    assert registry.rollback().current == "grpo-0001"
    assert registry.rollback().current is None  # back to the base model
    with pytest.raises(RegistryError, match="nothing to roll back"):
        registry.rollback()
    assert [e["action"] for e in registry.state().log] == ["publish", "use", "rollback", "rollback"]


def test_rollback_skips_adapters_deleted_since(registry):
    registry.set_current("grpo-0001")
    registry.set_current("grpo-0002")
    registry.set_current("grpo-0003")
    import shutil

    shutil.rmtree(registry.root / "grpo-0002")
    assert registry.rollback().current == "grpo-0001"


def test_unknown_and_bad_names_are_one_line_errors(registry):
    with pytest.raises(RegistryError, match="no adapter named 'nope'.*grpo-0001"):
        registry.set_current("nope")
    with pytest.raises(RegistryError, match="bad adapter name"):
        registry.path("../etc")


def test_metadata_updates_merge(registry):
    registry.update_metadata("grpo-0002", eval={"passed": True})
    meta = registry.metadata("grpo-0002")
    assert meta["eval"] == {"passed": True} and meta["step"] == 1


def test_corrupt_registry_file_is_reported(registry):
    (registry.root / "registry.json").write_text("{not json")
    with pytest.raises(RegistryError, match="corrupt"):
        _ = registry.current


def test_gate_verdict_and_publish_record_the_decision(registry, tmp_path):
    import asyncio

    from deepresearch.train.adapters.publish import DevSet, gate_verdict, publish

    dev = DevSet(questions=tmp_path / "q", corpus=tmp_path / "c", seeds=[0, 1], tolerance=0.01)
    worse = gate_verdict("grpo-0002", "grpo-0001", dev, {0: 0.30, 1: 0.20}, {0: 0.30, 1: 0.30})
    assert not worse.passed and worse.candidate_score == pytest.approx(0.25)
    within = gate_verdict("grpo-0002", None, dev, {0: 0.295, 1: 0.30}, {0: 0.30, 1: 0.30})
    assert within.passed and "passed" in within.line() and "base model" in within.line()
    assert not gate_verdict("grpo-0002", None, dev, {0: None, 1: None}, {0: 0.1, 1: 0.1}).passed

    assert asyncio.run(publish("grpo-0002", registry, [], worse)) is False
    assert registry.current is None and registry.metadata("grpo-0002")["eval"]["passed"] is False
    assert asyncio.run(publish("grpo-0002", registry, [], within)) is True
    assert registry.current == "grpo-0002"


def test_an_adapter_answers_for_the_roles_it_was_trained_on(registry, tmp_path):
    from deepresearch.agent.model.policy import AdapterChoice
    from deepresearch.train.adapters.registry import adapter_choice
    from deepresearch.train.config import RewardSettings

    assert RewardSettings().trained_roles() is None  # every role trained: the adapter answers for all
    others = {"planner": 0, "coordinator": 0, "executor": 0, "extractor": 0, "outliner": 0, "reporter": 0}
    writer_only = RewardSettings(role_weights={**others, "answer": 0, "bridge": 0})
    assert writer_only.trained_roles() == {"writer"}
    # the re-ranker's choice ("answer") and the hop's ("bridge") are roles too, trained unless left out
    assert RewardSettings(role_weights=others).trained_roles() == {"writer", "answer", "bridge"}
    assert RewardSettings(role_weights={"planner": 0.5}).trained_roles() is None
    assert registry.choice("grpo-0001").roles is None  # no `roles` in metadata
    assert registry.choice(None) == AdapterChoice.active()
    registry.update_metadata("grpo-0002", roles=["planner", "writer"])
    assert registry.choice("grpo-0002") == AdapterChoice.named("grpo-0002", frozenset({"planner", "writer"}))
    assert adapter_choice("x", tmp_path / "no-such-adapter").roles is None
    (tmp_path / "grpo-0003" / "metadata.json").write_text("{not json")
    assert registry.choice("grpo-0003").roles is None


def test_a_trained_writer_or_choice_loss_also_reranks_and_a_child_keeps_its_parents_roles(registry):
    from types import SimpleNamespace

    from deepresearch.train.config import GRPOSettings, RewardSettings, TrainSettings, trainable_roles
    from deepresearch.train.rounds.loop import TrainLoop

    def roles(weights: dict[str, float], parent: str | None = None, choice_lr: float = 0.0):
        settings = TrainSettings(rewards=RewardSettings(role_weights=weights),
                                 grpo=GRPOSettings(answer_choice_lr=choice_lr))
        loop = SimpleNamespace(ctx=SimpleNamespace(settings=settings, registry=registry), policy_adapter=parent)
        return TrainLoop._answering_roles(loop)

    others = {"planner": 0, "coordinator": 0, "executor": 0, "extractor": 0, "outliner": 0, "reporter": 0}
    assert roles(others) == {"writer", "answer"}  # the re-ranker has always used the writer's weights
    assert roles({**others, "writer": 0, "planner": 1}) == {"planner"}
    # the choice loss (on by default) trains the re-ranker on the same adapter
    assert roles({**others, "writer": 0, "planner": 1}, choice_lr=3e-4) == {"planner", "answer", "bridge"}
    assert roles({**others, "writer": 0, "planner": 1, "answer": 0, "bridge": 0}, choice_lr=3e-4) == {"planner"}
    assert roles({**others, "writer": 0, "answer": 1, "bridge": 0}, choice_lr=3e-4) == {"answer"}
    # Every role with the hop's choice loss on: named one by one, since only an adapter whose scope names
    # "bridge" makes that choice (an unscoped one leaves it to the rule).
    assert roles({}, choice_lr=3e-4) == set(trainable_roles())
    assert TrainSettings().grpo.answer_choice_lr > 0
    registry.update_metadata("grpo-0002", roles=["answer"])
    assert roles({**others, "writer": 0, "planner": 1}, parent="grpo-0002") == {"planner", "answer"}
    assert roles({}) is None
    assert roles({**others, "writer": 0, "bridge": 1, "answer": 0}, parent="grpo-0001", choice_lr=3e-4) \
        == set(trainable_roles())  # the parent (no roles) answered for every role
