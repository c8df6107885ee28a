"""`--system reader`: the graph's answer reader alone over the question's own search, on the real local index,
local web and search tool; no model call."""

from __future__ import annotations

import json
from pathlib import Path

from deepresearch.agent.config import AgentSettings
from deepresearch.evals.config import EvalSettings
from deepresearch.evals.data.dataset import load_questions
from deepresearch.evals.run.reader_system import run_reader
from deepresearch.evals.run.results import score_output
from deepresearch.evals.run.systems import SYSTEM_NAMES, SystemContext

from tests.evals.scripted_model import ScriptedModel
from tests.evals.test_cli import _one_line_error, cli  # noqa: F401 - the CLI fixture
from tests.evals.test_systems import world  # noqa: F401 - the real index, local web and tools


def _ask(tmp_path: Path, question: str, answer: str, gold: list[str]):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "q", "question": question, "answer": answer, "gold_doc_ids": gold}))
    return load_questions(path)[0]


def _ctx(world, model: ScriptedModel, **agent) -> SystemContext:  # noqa: F811
    tools, store, _ = world
    return SystemContext(model=model, store=store, agent=AgentSettings(**agent), evals=EvalSettings(), eval_id="r",
                         tools=tools)


async def test_the_reader_answers_from_the_unit_that_states_it_and_cites_it(world) -> None:  # noqa: F811
    model = ScriptedModel({})
    question = _ask(world[2], "On which river does Paris lie?", "Seine", ["d1", "d3"])
    out = await run_reader(question, _ctx(world, model))
    assert out.answer == "Seine" and out.error is None
    assert out.llm_calls == 0 and model.requests == []  # the reader alone: no model call at all
    assert out.tool_calls == 1 and out.confidence is not None and out.confidence >= 0.09
    [cite] = out.citations
    assert cite.doc_id in ("d1", "d3") and cite.verified and cite.claim == "Seine"
    assert "Seine" in cite.quote
    scores = score_output(question, out)
    assert scores.em == 1.0 and scores.wrong_verified == 0.0


async def test_below_the_threshold_it_says_not_found_with_no_citation(world) -> None:  # noqa: F811
    question = _ask(world[2], "On which river does Paris lie?", "Seine", ["d1", "d3"])
    out = await run_reader(question, _ctx(world, ScriptedModel({}), min_answer_confidence=1.0))
    assert out.answer == "not found" and out.citations == [] and out.confidence is not None
    assert score_output(question, out).answered == 0.0


async def test_a_yes_no_question_the_evidence_does_not_decide_is_not_found(world) -> None:  # noqa: F811
    # the graph would let the model choose; the reader alone has no model
    question = _ask(world[2], "Is Lyon older than Marseille?", "yes", ["d2"])
    out = await run_reader(question, _ctx(world, ScriptedModel({})))
    assert out.answer == "not found" and out.citations == [] and out.llm_calls == 0


def test_reader_is_a_system_the_eval_offers() -> None:
    assert "reader" in SYSTEM_NAMES


def test_cli_reader_over_a_folder_of_notes(cli, tmp_path: Path, monkeypatch) -> None:  # noqa: F811
    # the answer, not the threshold, is under test here: a one-line note scores near 0.09
    monkeypatch.setenv("DEEPRESEARCH_AGENT__MIN_ANSWER_CONFIDENCE", "0.05")
    docs = tmp_path / "notes"
    docs.mkdir()
    (docs / "torque.md").write_text("# Workshop torque settings\n\nCassette lockring: 40 Nm\n\n"
                                    "Bottom bracket cups: 35 Nm\n")
    (docs / "stock.csv").write_text("part,qty,shelf\nVH400,2,B3\nBME280,1,C1\n")
    qfile = tmp_path / "q.jsonl"
    rows = [{"id": "pin", "question": "What torque should a cassette lockring be tightened to?", "answer": "40 Nm",
             "gold_doc_ids": ["torque.md"]},
            {"id": "none", "question": "Who installed the greenhouse heater?", "answer": "not found",
             "gold_doc_ids": []}]
    qfile.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = cli("--questions", qfile, "--docs", docs, "--system", "reader", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    answers = {r["question_id"]: r for r in map(json.loads, (tmp_path / "o" / "results.jsonl").open())}
    assert answers["pin"]["output"]["answer"] == "40 Nm" and answers["pin"]["scores"]["em"] == 1.0
    assert answers["none"]["output"]["answer"] == "not found"
    assert all(r["output"]["llm_tokens"] == 0 for r in answers.values())
    assert "| metric | reader |" in (tmp_path / "o" / "report.md").read_text()


def test_cli_reader_bad_input_is_one_line(cli, tmp_path: Path) -> None:  # noqa: F811
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps({"id": "a", "question": "Who?", "answer": "x"}) + "\n")
    _one_line_error(cli("--questions", qfile, "--system", "reader", "--out", tmp_path / "o"),
                    "system 'reader' searches a corpus: give --corpus FILE")
    _one_line_error(cli("--questions", qfile, "--system", "readr", "--out", tmp_path / "o"),
                    "unknown system 'readr' (choose from closed-book, retrieve, agent-loop, graph, reader)")
    assert not (tmp_path / "o" / "results.jsonl").exists()
