"""Runner logic with a scripted model: results, trace tags, resume, errors, concurrency, determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deepresearch.agent.config import AgentSettings, BudgetSettings
from deepresearch.agent.model.policy import AdapterChoice, RunPolicy
from deepresearch.agent.trace.store import TraceStore
from deepresearch.evals.config import EvalSettings
from deepresearch.evals.data.dataset import load_questions
from deepresearch.evals.reports.report import _header
from deepresearch.evals.run.results_file import ResultsFile
from deepresearch.evals.run.runner import EvalError, EvalRuntime, EvalSelection, plan_eval, run_eval, run_questions
from deepresearch.evals.run.systems import SystemContext

from tests.evals.scripted_model import ScriptedModel

QUESTIONS = [
    # id, question, gold, type, source, scripted answer
    ("q1", "Capital of France?", "Paris", "bridge", "hotpotqa", "Paris"),
    ("q2", "Who wrote Hamlet?", "William Shakespeare", "bridge", "hotpotqa", "Shakespeare"),
    ("q3", "Is water wet?", "yes", "comparison", "hotpotqa", "yes"),
    ("q4", "Is fire cold?", "no", "comparison", "hotpotqa", "yes it is"),
    ("q5", "Largest planet?", "Jupiter", "2hop", "musique", "Saturn"),
    ("q6", "Year the war ended?", "1945", "2hop", "musique", "1945"),
]


def write_questions(path: Path, split: str = "dev") -> Path:
    lines = [
        json.dumps({"id": i, "question": q, "answer": a, "type": t, "source": s, "split": split})
        for i, q, a, t, s, _ in QUESTIONS
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def answers() -> dict[str, str]:
    return {q: ans for _, q, _, _, _, ans in QUESTIONS}


@pytest.fixture
def qfile(tmp_path: Path) -> Path:
    return write_questions(tmp_path / "questions.jsonl")


@pytest.fixture
def store(tmp_path: Path):
    s = TraceStore(tmp_path / "traces.db")
    yield s
    s.close()


async def _run(qfile: Path, out: Path, store: TraceStore, model: ScriptedModel, limit: int | None = None,
               adapter: str | None = None, **kw) -> object:
    evals = EvalSettings(concurrency=kw.pop("concurrency", 3), seed=kw.pop("seed", 0))
    policy = RunPolicy(adapter=AdapterChoice.named(adapter) if adapter else AdapterChoice.active())
    return await run_eval(
        EvalSelection(questions=qfile, limit=limit), EvalRuntime(model, store, AgentSettings(), evals=evals),
        systems=["closed-book"], out_dir=out, policy=policy, progress=False, **kw,
    )


async def test_closed_book_scores_and_traces(qfile: Path, tmp_path: Path, store: TraceStore) -> None:
    model = ScriptedModel(answers())
    summary = await _run(qfile, tmp_path / "out", store, model)
    results = {r.question_id: r for r in ResultsFile(tmp_path / "out").load()}
    assert len(results) == 6 and len(model.requests) == 6
    assert results["q1"].scores.em == 1.0
    assert results["q2"].scores.em == 0.0 and results["q2"].scores.f1 == pytest.approx(2 / 3)
    assert results["q3"].scores.f1 == 1.0
    assert results["q4"].scores.f1 == 0.0  # yes/no counts by EM only
    assert results["q1"].scores.found_in_evidence is None  # closed-book retrieves nothing
    sys = summary.systems["closed-book"]
    assert sys.n == 6
    assert sys.metrics["em"].mean == pytest.approx(3 / 6)
    assert sys.metrics["f1"].mean == pytest.approx((1 + 2 / 3 + 1 + 0 + 0 + 1) / 6)
    assert sys.metrics["llm_tokens"].mean > 10
    assert set(sys.by_type) == {"bridge", "comparison", "2hop"}
    assert sys.by_source["musique"]["em"].n == 2
    # every run is in the trace store, tagged with the eval id, with its LLM call
    eval_id = summary.eval_id
    runs = store.list_runs(limit=None, tags={"eval_id": eval_id})
    assert len(runs) == 6 and {r.tags["system"] for r in runs} == {"closed-book"}
    run = store.get_run(results["q1"].output.run_id)
    assert run.status == "finished" and run.answer == "Paris"
    llm = store.events(run.id, kind="llm")
    assert len(llm) == 1 and llm[0].payload["role"] == "answerer"
    assert (tmp_path / "out" / "summary.json").is_file()


async def test_resume_runs_only_missing_questions(qfile: Path, tmp_path: Path, store: TraceStore) -> None:
    out = tmp_path / "out"
    first = ScriptedModel(answers())
    await _run(qfile, out, store, first, limit=2)
    assert len(first.requests) == 2
    # a torn last line (process killed mid-write) is dropped and that question re-run
    with (out / "results.jsonl").open("a") as fh:
        fh.write('{"eval_id": "x", "sys')
    second = ScriptedModel(answers())
    summary = await _run(qfile, out, store, second)
    assert len(second.requests) == 4  # the 2 done ones were not asked again
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 6 and all(json.loads(line) for line in lines)
    assert summary.systems["closed-book"].n == 6
    # the same eval id across both invocations
    assert len({json.loads(line)["eval_id"] for line in lines}) == 1


async def test_errors_are_results_and_can_be_retried(qfile: Path, tmp_path: Path, store: TraceStore) -> None:
    out = tmp_path / "out"
    model = ScriptedModel(answers(), fail_on={"Largest planet?"})
    summary = await _run(qfile, out, store, model)
    assert summary.metric("closed-book", "error").mean == pytest.approx(1 / 6)
    failed = [r for r in ResultsFile(out).load() if r.output.error]
    assert len(failed) == 1 and "ModelError" in failed[0].output.error
    assert store.get_run(failed[0].output.run_id).status == "error"
    again = ScriptedModel(answers())
    await _run(qfile, out, store, again)
    assert len(again.requests) == 0  # errors are final unless asked
    summary = await _run(qfile, out, store, again, retry_errors=True)
    assert len(again.requests) == 1
    assert summary.metric("closed-book", "error").mean == 0.0


async def test_concurrency_is_bounded(qfile: Path, tmp_path: Path, store: TraceStore) -> None:
    model = ScriptedModel(answers(), delay_s=0.05)
    await _run(qfile, tmp_path / "out", store, model, concurrency=2)
    assert model.max_in_flight == 2


async def test_same_seed_same_selection_and_results(qfile: Path, tmp_path: Path, store: TraceStore) -> None:
    def order(out: Path) -> list[str]:
        return json.loads((out / "manifest.json").read_text())["question_ids"]

    await _run(qfile, tmp_path / "a", store, ScriptedModel(answers()), limit=3, seed=5)
    await _run(qfile, tmp_path / "b", store, ScriptedModel(answers()), limit=3, seed=5)
    await _run(qfile, tmp_path / "c", store, ScriptedModel(answers()), limit=3, seed=6)
    assert order(tmp_path / "a") == order(tmp_path / "b")
    assert order(tmp_path / "a") != order(tmp_path / "c")
    sa = json.loads((tmp_path / "a" / "summary.json").read_text())
    sb = json.loads((tmp_path / "b" / "summary.json").read_text())
    for summary in (sa, sb):
        del summary["systems"]["closed-book"]["metrics"]["wall_s"]  # the one thing that varies
    assert sa["systems"] == sb["systems"]


async def test_out_dir_of_another_eval_is_refused(qfile: Path, tmp_path: Path, store: TraceStore) -> None:
    out = tmp_path / "out"
    await _run(qfile, out, store, ScriptedModel(answers()), limit=1)
    with pytest.raises(EvalError, match="different seed"):
        await _run(qfile, out, store, ScriptedModel(answers()), limit=1, seed=9)
    other = write_questions(tmp_path / "other.jsonl", split="test")
    with pytest.raises(EvalError, match="different questions_sha256"):
        plan_eval(EvalSelection(questions=other), systems=["closed-book"], out_dir=out, model_name="scripted")


def test_the_manifest_holds_the_agent_settings_changed_and_a_resume_must_match(qfile: Path, tmp_path: Path) -> None:
    out, selection = tmp_path / "o", EvalSelection(questions=qfile)
    changed = AgentSettings(hop_likeness_weight=2.0, budget=BudgetSettings(max_rounds=5))
    plan = plan_eval(selection, systems=["closed-book"], out_dir=out, model_name="m", agent=changed)
    assert plan.manifest.agent_changes == {"hop_likeness_weight": 2.0, "budget.max_rounds": 5}
    assert "agent settings changed: budget.max_rounds = 5, hop_likeness_weight = 2.0" in "\n".join(_header(out))
    with pytest.raises(EvalError, match="different agent_changes"):
        plan_eval(selection, systems=["closed-book"], out_dir=out, model_name="m", agent=AgentSettings())
    # An eval run on the defaults (or planned before the field existed) resumes on the defaults.
    plan_eval(selection, systems=["closed-book"], out_dir=tmp_path / "d", model_name="m", agent=AgentSettings())
    plan_eval(selection, systems=["closed-book"], out_dir=tmp_path / "d", model_name="m")


def test_plan_rejects_bad_input(qfile: Path, tmp_path: Path) -> None:
    kw = {"out_dir": tmp_path / "o", "model_name": "m"}
    selection = EvalSelection(questions=qfile)
    with pytest.raises(EvalError, match="unknown system 'rag'"):
        plan_eval(selection, systems=["rag"], **kw)
    with pytest.raises(EvalError, match="system 'retrieve' searches a corpus: give --corpus"):
        plan_eval(selection, systems=["closed-book", "retrieve"], **kw)
    with pytest.raises(EvalError, match="--limit must be at least 1"):
        plan_eval(EvalSelection(questions=qfile, limit=0), systems=["closed-book"], **kw)
    (tmp_path / "file").write_text("x")
    with pytest.raises(EvalError, match="is a file"):
        plan_eval(selection, systems=["closed-book"], out_dir=tmp_path / "file", model_name="m")


async def test_adapter_must_be_loaded(qfile: Path, tmp_path: Path, store: TraceStore) -> None:
    model = ScriptedModel(answers())
    with pytest.raises(EvalError, match="adapter 'v2' is not loaded"):
        await _run(qfile, tmp_path / "out", store, model, adapter="v2")
    await model.load_adapter("v2", tmp_path)
    await _run(qfile, tmp_path / "out2", store, model, adapter="v2", limit=2)
    assert all(r.adapter == "v2" for r in model.requests)


async def test_run_questions_directly(qfile: Path, tmp_path: Path, store: TraceStore) -> None:
    questions = load_questions(qfile)
    ctx = SystemContext(model=ScriptedModel(answers()), store=store, agent=AgentSettings(), evals=EvalSettings(),
                        eval_id="direct")
    results = await run_questions(questions[:2], ["closed-book"], context=ctx, out_dir=tmp_path / "o",
                                  progress=False)
    assert [r.question_id for r in results] == ["q1", "q2"]
    assert all(r.eval_id == "direct" for r in results)
