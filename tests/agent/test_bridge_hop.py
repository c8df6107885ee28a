"""The follow-up hop of a multi-hop question: the bridge name it searches, by rule, by the model's call, or by
an adapter trained for the choice (agent/graph/nodes/follow_up.py, agent/graph/scoring.py). Scripted model."""

from __future__ import annotations

import pytest
from deepresearch.agent.config import AgentSettings, BudgetSettings
from deepresearch.agent.model.policy import AdapterChoice, RunPolicy
from deepresearch.agent.reader import ANSWER_ROLE, BRIDGE_ROLE
from pydantic import ValidationError

from .conftest import agent_settings as budget_settings
from .conftest import default_script, first_matching, run, user_text
from .fakes import ScriptedModel


async def test_coordinator_follow_up_searches_a_bridge_entity(toolbox, store):
    base = default_script(("Ada Lovelace born",))
    offered = []

    def script(role, request):
        if role == "coordinator":
            assert "[1]" in user_text(request)  # it sees the findings so far
            offered.append(request.json_schema["properties"]["search"]["enum"])
            return {"search": first_matching(offered[-1], "Engine")}
        return base(role, request)

    model = ScriptedModel(script)
    settings = AgentSettings(budget=BudgetSettings(max_rounds=2), bridge_choice="model", hop_skip_confidence=0)
    result = await run(model, toolbox, store, question="Who designed the engine Ada Lovelace wrote for?",
                       settings=settings)
    searches = [raw["query"] for name, raw in toolbox.invocations if name == "search"]
    # The hop searches a name the evidence gave (a choice, not free text), never one of the question's.
    bridge = first_matching(offered[0], "Engine")
    assert "Engine" in bridge and not any("Lovelace" in name for name in offered[0])
    assert searches[-1] == bridge
    assert model.calls("coordinator") == 1  # the round limit ends the run after the second hop
    assert [s["bridge"] for s in result.plan if s.get("bridge")] == [bridge]
    assert result.status == "finished"
    assert "Babbage" in result.answer
    # The answer cites the sentence it was taken from, and that citation verifies.
    assert result.answer in result.citations[0]["quote"] and result.citations[0]["verified"]


def agent_settings(**budget) -> AgentSettings:
    """These tests check the hop itself, so it is made even where the first round already answers."""
    return budget_settings(**budget).model_copy(update={"hop_skip_confidence": 0.0})


BRIDGE_QUESTION = "Who designed the engine Ada Lovelace wrote for?"


async def test_an_adapter_trained_for_the_bridge_chooses_the_hop_by_its_scores(toolbox, store):
    ranked = await run(ScriptedModel(default_script(("Ada Lovelace born",))), toolbox, store,
                       question=BRIDGE_QUESTION, settings=agent_settings(max_rounds=2))
    offered = store.events(ranked.run_id, "decision")[0].payload["options"]
    assert len(offered) > 1
    for roles, hop in (({ANSWER_ROLE, BRIDGE_ROLE}, offered[-1]), ({ANSWER_ROLE}, offered[0])):
        model = ScriptedModel(default_script(("Ada Lovelace born",)))
        # the bridge's prompt likes the last name offered, far beyond the features' differences
        model.scorer = lambda prompt, cand: (-0.1 if cand == " " + offered[-1] else -20.0) \
            if prompt.endswith("Look up:") else -1.0
        policy = RunPolicy(adapter=AdapterChoice.named("choice-0003", roles=frozenset(roles)))
        result = await run(model, toolbox, store, question=BRIDGE_QUESTION, settings=agent_settings(max_rounds=2),
                           policy=policy)
        decision = store.events(result.run_id, "decision")[0].payload
        assert decision["options"] == offered and decision["search"] == hop
        assert [s["bridge"] for s in result.plan if s.get("bridge")] == [hop]
        bridge_calls = [adapter for prompt, adapter in model.scored if prompt.endswith("Look up:")]
        # What the trainer scores again (train/choice/bridge_examples.py): each name's sentence and features, and the
        # sources read before the hop.
        logged = decision["candidates"]
        assert [c["text"] for c in logged] == offered and all(c["text"] in c["quote"] for c in logged)
        assert decision["read"] and set(decision["read"]) <= {"d1", "d2", "d3"}
        if BRIDGE_ROLE in roles:
            assert bridge_calls and set(bridge_calls) == {"choice-0003"} and len(decision["scores"]) == len(offered)
            assert [round(c["features"] + c["likelihood"], 4) for c in logged] == decision["scores"]
        else:  # not trained for it: the rule's choice, nothing scored for it
            assert not bridge_calls and "scores" not in decision
            assert {c["likelihood"] for c in logged} == {0.0}
        assert model.calls("coordinator") == 0


async def test_by_default_the_hop_searches_the_best_ranked_bridge_name_without_a_model_call(toolbox, store):
    model = ScriptedModel(default_script(("Ada Lovelace born",)))
    result = await run(model, toolbox, store, question="Who designed the engine Ada Lovelace wrote for?",
                       settings=agent_settings(max_rounds=2))
    bridges = [s["bridge"] for s in result.plan if s.get("bridge")]
    decision = [e.payload for e in store.events(result.run_id, "decision")]
    assert len(decision[0]["options"]) > 1 and bridges == [decision[0]["options"][0]] == [decision[0]["search"]]
    assert "Lovelace" not in bridges[0]
    assert model.calls("coordinator") == 0


async def test_with_two_hops_both_best_names_are_searched_and_the_better_scored_pool_answers(toolbox, store):
    model = ScriptedModel(default_script(("Ada Lovelace born",)))
    model.scorer = lambda prompt, cand: -0.1 * len(cand)  # any scores that differ between candidates
    settings = AgentSettings(budget=BudgetSettings(max_rounds=2), bridge_hops=2, hop_skip_confidence=0)
    result = await run(model, toolbox, store, question=BRIDGE_QUESTION, settings=settings)
    decision = store.events(result.run_id, "decision")
    assert len(decision) == 1  # one decision, the first name's: what the trainer learns from
    options = decision[0].payload["options"]
    bridges = [s["bridge"] for s in result.plan if s.get("bridge")]
    assert len(options) > 2 and bridges == options[:2] and decision[0].payload["search"] == options[0]
    searches = [raw["query"] for name, raw in toolbox.invocations if name == "search"]
    assert set(bridges) <= set(searches)
    # Each hop's evidence is ranked apart; the answer is the pick whose features + likelihood score higher.
    tops = [e.payload["candidates"][0] for e in store.events(result.run_id, "answer_scores")]
    assert len(tops) == 2 and tops[0] != tops[1]
    assert result.answer == max(tops, key=lambda c: c["features"] + c["likelihood"])["text"]
    assert result.status == "finished"


async def test_with_two_hops_a_pool_of_one_is_scored_too_so_that_the_pools_compare(toolbox, store):
    for hops, rankings in ((1, 0), (2, 2)):  # one hop: a single candidate needs no score call, as before
        model = ScriptedModel(default_script(("Ada Lovelace born",)))
        model.scorer = lambda prompt, cand: -0.1 * len(cand)
        settings = AgentSettings(budget=BudgetSettings(max_rounds=2), bridge_hops=hops, answer_pool=1,
                                 hop_skip_confidence=0)
        result = await run(model, toolbox, store, question=BRIDGE_QUESTION, settings=settings)
        scored = store.events(result.run_id, "answer_scores")
        assert len(scored) == rankings and all(len(e.payload["candidates"]) == 1 for e in scored)
        assert all(e.payload["candidates"][0]["likelihood"] < 0 for e in scored)


def test_bridge_hops_must_be_between_one_and_the_names_offered():
    for bad in (0, 6):
        with pytest.raises(ValidationError):
            AgentSettings(bridge_hops=bad)


async def test_no_hop_when_the_first_round_already_answers(toolbox, store):
    """agent.hop_skip_confidence: a bridge hop's sources count as about the question, so on a question the first
    round answers, another entity's page could only outrank the answer. Set, the run answers from the first round."""
    question = "When was Ada Lovelace born?"
    settings = agent_settings(max_rounds=2)
    settings.hop_skip_confidence = 0.0  # a hop on every free-form question
    hopping = await run(ScriptedModel(default_script(("Ada Lovelace born",))), toolbox, store, question=question,
                        settings=settings)
    assert [s for s in hopping.plan if s.get("bridge")]
    settings.hop_skip_confidence = 0.05
    skipped = await run(ScriptedModel(default_script(("Ada Lovelace born",))), toolbox, store, question=question,
                        settings=settings)
    assert not [s for s in skipped.plan if s.get("bridge")]
    [event] = store.events(skipped.run_id, "hop_skipped")
    assert event.payload["confidence"] >= 0.05 and event.payload["answer"] in skipped.answer
    assert "1815" in skipped.answer
    settings.hop_skip_confidence = 0.999  # a floor the answer does not reach: the hop is made
    unsure = await run(ScriptedModel(default_script(("Ada Lovelace born",))), toolbox, store, question=question,
                       settings=settings)
    assert [s for s in unsure.plan if s.get("bridge")] and not store.events(unsure.run_id, "hop_skipped")
