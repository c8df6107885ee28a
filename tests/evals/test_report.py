"""Reports (JSON, markdown, PNG plots) and `compare` on evals run with a scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deepresearch.agent.config import AgentSettings
from deepresearch.agent.trace.store import TraceStore
from deepresearch.evals.config import EvalSettings
from deepresearch.evals.reports.compare import compare_dirs, render_comparison
from deepresearch.evals.reports.report import write_report
from deepresearch.evals.run.runner import EvalRuntime, EvalSelection, run_eval

from tests.evals.scripted_model import ScriptedModel
from tests.evals.test_runner import QUESTIONS, answers, write_questions

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


async def _eval(qfile: Path, out: Path, store: TraceStore, scripted: dict[str, str]) -> None:
    runtime = EvalRuntime(ScriptedModel(scripted), store, AgentSettings(), evals=EvalSettings(concurrency=2))
    await run_eval(EvalSelection(questions=qfile), runtime, systems=["closed-book"], out_dir=out, progress=False)


@pytest.fixture
async def two_evals(tmp_path: Path):
    qfile = write_questions(tmp_path / "q.jsonl")
    store = TraceStore(tmp_path / "t.db")
    better = answers() | {"Largest planet?": "Jupiter", "Capital of France?": "Lyon"}
    await _eval(qfile, tmp_path / "a", store, answers())
    await _eval(qfile, tmp_path / "b", store, better)
    yield tmp_path / "a", tmp_path / "b"
    store.close()


async def test_report_files(two_evals: tuple[Path, Path]) -> None:
    a, _ = two_evals
    paths = write_report(a)
    markdown = paths.markdown.read_text()
    assert "| metric | closed-book |" in markdown
    assert "| EM | 0.500 [" in markdown
    assert "## F1 by type" in markdown and "| 2hop |" in markdown
    assert "## EM by source" in markdown and "| musique |" in markdown
    assert "split all" in markdown and "model: scripted" in markdown
    summary = json.loads(paths.summary.read_text())
    em = summary["systems"]["closed-book"]["metrics"]["em"]
    assert em["mean"] == 0.5 and em["low"] <= 0.5 <= em["high"] and em["n"] == len(QUESTIONS)
    assert summary["systems"]["closed-book"]["metrics"]["citation_recall"]["mean"] is None  # no gold docs
    assert [p.name for p in paths.plots] == ["metrics.png", "cost.png", "by_type.png"]
    for plot in paths.plots:
        data = plot.read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5_000
        assert f"![{plot.stem}]({plot.name})" in markdown


async def test_compare_paired_diff_and_flips(two_evals: tuple[Path, Path]) -> None:
    a, b = two_evals
    comparison = compare_dirs(a, b, seed=0)
    closed = comparison.systems["closed-book"]
    assert closed.n_common == len(QUESTIONS) and closed.only_a == closed.only_b == 0
    em = closed.metrics["em"]
    assert em.a == pytest.approx(0.5) and em.b == pytest.approx(0.5) and em.diff.mean == pytest.approx(0.0)
    flips = {f.question_id: f for f in closed.flips}
    assert set(flips) == {"q1", "q5"}
    assert flips["q5"].fixed and flips["q5"].answer_b == "Jupiter"
    assert not flips["q1"].fixed and flips["q1"].answer_b == "Lyon"
    # The fix is a MuSiQue question, the break a HotpotQA one: the slices tell them apart where the total does not.
    musique, hotpotqa = closed.by_source["musique"], closed.by_source["hotpotqa"]
    assert (musique.n, musique.em.a, musique.em.b) == (2, 0.5, 1.0) and musique.em.diff.mean == pytest.approx(0.5)
    assert (hotpotqa.n, hotpotqa.em.a, hotpotqa.em.b) == (4, 0.5, 0.25)
    assert list(closed.by_type) == ["2hop", "bridge", "comparison"]
    assert closed.by_type["bridge"].em.diff.mean == pytest.approx(-0.5)
    assert closed.by_type["comparison"].em.diff.mean == pytest.approx(0.0)
    text = render_comparison(comparison)
    assert "EM flips: 1 fixed (wrong in A, right in B), 1 broken." in text
    assert "| EM | 0.500 | 0.500 | +0.000 [" in text
    assert "| EM by source | n | A | B |" in text and "| musique | 2 | 0.500 | 1.000 | +0.500 [" in text
    assert "| EM by type | n | A | B |" in text and "| bridge | 2 | 0.500 | 0.000 | -0.500 [" in text


def test_one_source_makes_no_slice_table() -> None:
    from deepresearch.evals.reports.compare import compare_results
    from deepresearch.evals.run.results import QuestionResult

    def row(qid: str, em: float) -> QuestionResult:
        return QuestionResult.model_validate({
            "eval_id": "e", "system": "graph", "question_id": qid, "question": "q?", "gold": ["x"],
            "qtype": "bridge", "source": "hotpotqa", "output": {"answer": "x" if em else "y"},
            "scores": {"em": em, "f1": em}})

    [comparison] = compare_results([row("a", 0.0), row("b", 1.0)], [row("a", 1.0), row("b", 1.0)]).values()
    assert comparison.by_source == {} and comparison.by_type == {}  # one slice would repeat the EM row
    assert comparison.metrics["em"].diff.mean == pytest.approx(0.5)


def test_report_of_empty_dir_fails(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no results yet"):
        write_report(tmp_path)


async def test_cli_compare_and_report(two_evals: tuple[Path, Path], tmp_path: Path) -> None:
    import typer
    from deepresearch.app.commands.eval import register
    from typer.testing import CliRunner

    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        pass

    register(app)
    a, b = two_evals
    result = CliRunner().invoke(app, ["eval", "compare", str(a), str(b), "--out", str(tmp_path / "cmp.json")])
    assert result.exit_code == 0, result.stderr
    assert "## closed-book — 6 common questions" in result.output and "1 fixed" in result.output
    saved = json.loads((tmp_path / "cmp.json").read_text())
    assert len(saved["systems"]["closed-book"]["flips"]) == 2
    result = CliRunner().invoke(app, ["eval", "report", str(a), "--no-plots"])
    assert result.exit_code == 0 and "report.md" in result.output


async def test_compare_two_systems_of_one_eval(two_evals: tuple[Path, Path]) -> None:
    a, b = two_evals
    comparison = compare_dirs(a, b, seed=0, systems=("closed-book", "closed-book"))
    (label, comp), = comparison.systems.items()
    assert label == "closed-book (A) vs closed-book (B)" and comp.n_common == len(QUESTIONS)
    with pytest.raises(ValueError, match="no results of system 'graph'"):
        compare_dirs(a, b, seed=0, systems=("closed-book", "graph"))


def test_conversion_offered_and_claim_support_scores() -> None:
    from deepresearch.evals.data.dataset import EvalQuestion
    from deepresearch.evals.run.results import EvalCitation, SystemOutput, make_result
    from deepresearch.evals.scoring.aggregate import METRICS

    question = EvalQuestion(id="q", question="In what year did she die?", answer="1689")
    cites = [EvalCitation(n=1, source="s", quote="She died on 16 April 1689.", claim="1689", verified=True),
             EvalCitation(n=2, source="s", quote="She died on 16 April 1689.", claim="John Burgoyne", verified=True)]
    right = make_result("e", "graph", question, SystemOutput(
        answer="1689", evidence=["She died in 1689."], citations=cites, answer_options=["1640", "1689"]))
    wrong = make_result("e", "graph", question, SystemOutput(
        answer="1640", evidence=["She died in 1689."], answer_options=["1640"]))
    missing = make_result("e", "graph", question, SystemOutput(answer="1640", evidence=["Nothing here."]))
    assert right.scores.supported_share == 0.5  # the Burgoyne point's quote does not name him
    assert right.scores.offered == 1.0 and wrong.scores.offered == 0.0 and missing.scores.offered is None
    ranked = make_result("e", "graph", question, SystemOutput(
        answer="1640", evidence=["She died in 1689."], answer_options=["1640"], answer_candidates=["1640", "1689"]))
    assert ranked.scores.offered == 0.0 and ranked.scores.among_candidates == 1.0
    assert right.scores.among_candidates is None  # not recorded (results written before the field existed)
    yes_no = EvalQuestion(id="y", question="Were both born in 1640?", answer="no")
    assert make_result("e", "graph", yes_no, SystemOutput(
        answer="yes", answer_candidates=["yes", "no"])).scores.among_candidates is None
    conversion = METRICS["conversion"]
    # Conversion counts only runs whose evidence held the answer: 1 of 2 here; the third is not counted.
    assert [conversion(r) for r in (right, wrong, missing)] == [1.0, 0.0, None]
