"""The eval's trust rows: share answered, precision when answered, "not found" on unanswerable questions, wrong
answers shown as verified, and the coverage-precision curve (answers sorted by the system's confidence)."""

from __future__ import annotations

from deepresearch.evals.data.dataset import EvalQuestion
from deepresearch.evals.reports.report import render_markdown
from deepresearch.evals.run.results import EvalCitation, SystemOutput, make_result
from deepresearch.evals.scoring.aggregate import summarize
from deepresearch.evals.scoring.calibration import coverage_precision
from deepresearch.evals.scoring.metrics import is_abstention


def _result(qid: str, gold: str, answer: str, *, confidence: float | None = None, verified: bool = True):
    question = EvalQuestion(id=qid, question=f"question {qid}?", answer=gold)
    cites = [EvalCitation(n=1, source="doc", quote=f"... {answer} ...", claim=answer, verified=verified)]
    output = SystemOutput(answer=answer, citations=cites if answer != "not found" else [], evidence=[],
                          confidence=confidence)
    return make_result("e", "graph", question, output)


def test_abstention_forms():
    assert is_abstention("not found") and is_abstention("Not found.") and is_abstention("")
    assert not is_abstention("Paris") and not is_abstention("not foundation")


def test_rows_on_a_mixed_set():
    results = [
        _result("a", "Paris", "Paris", confidence=0.9),
        _result("b", "Rome", "Milan", confidence=0.2),  # wrong, and shown as verified
        _result("c", "Oslo", "not found"),  # an honest abstention on an answerable question
        _result("d", "not found", "not found"),  # right: the corpus cannot answer it
        _result("e", "not found", "42", confidence=0.5, verified=False),  # answered the unanswerable, unverified
    ]
    metrics = summarize(results, eval_id="e").systems["graph"].metrics
    assert metrics["answered"].mean == 3 / 5
    assert metrics["precision_answered"].mean == 0.5 and metrics["precision_answered"].n == 2  # a and b
    assert metrics["abstained_answerable"].mean == 1 / 3
    assert metrics["not_found_unanswerable"].mean == 0.5 and metrics["not_found_unanswerable"].n == 2
    assert metrics["wrong_verified"].mean == 1 / 5  # b only: e's citation did not pass
    assert metrics["em"].mean == 2 / 5  # the abstention on d counts as right


def test_the_curve_sorts_by_confidence():
    results = [_result(str(i), "x", "x" if i < 3 else "y", confidence=1.0 - i / 10) for i in range(10)]
    curve = coverage_precision(results)
    assert [p.answered for p in curve] == list(range(1, 11))
    assert curve[2].precision == 1.0 and curve[2].right_kept == 1.0  # the three right answers are the surest
    assert curve[-1].precision == 0.3 and curve[-1].coverage == 1.0
    assert curve[2].threshold == 0.8


def test_no_confidence_no_curve_and_the_report_shows_the_rows():
    results = [_result("a", "Paris", "Paris"), _result("b", "not found", "not found")]
    summary = summarize(results, eval_id="e")
    assert summary.systems["graph"].curve == []
    markdown = render_markdown(summary, [], [])
    assert '"not found" on unanswerable | 1.000' in markdown
    assert "wrong answer shown with a verified citation" in markdown
    assert "Coverage and precision" not in markdown
    with_conf = summarize([_result("a", "Paris", "Paris", confidence=0.4)], eval_id="e")
    assert "## Coverage and precision: graph" in render_markdown(with_conf, [], [])


def test_the_coverage_plot_is_written_only_with_a_confidence(tmp_path):
    from deepresearch.evals.reports.plots import write_plots

    with_conf = summarize([_result("a", "Paris", "Paris", confidence=0.4), _result("b", "R", "M", confidence=0.1)],
                          eval_id="e")
    assert (tmp_path / "coverage.png") in write_plots(with_conf, tmp_path)
    assert (tmp_path / "coverage.png").read_bytes()[:4] == b"\x89PNG"
    other = tmp_path / "other"
    other.mkdir()
    assert all(p.name != "coverage.png" for p in write_plots(summarize([_result("a", "P", "P")], eval_id="e"), other))


def test_rescoring_an_old_result_fills_the_new_rows_and_keeps_its_citation_scores(tmp_path):
    from deepresearch.evals.run.results import rescored
    from deepresearch.evals.run.results_file import ResultsFile

    old = _result("b", "Rome", "Milan", confidence=0.2)
    old = old.model_copy(update={"scores": old.scores.model_copy(update={
        "wrong_verified": 0.0, "citation_precision": 0.5, "citation_recall": 1.0})})  # as written before the row
    again = rescored(old)
    assert again.scores.wrong_verified == 1.0 and again.scores.citation_precision == 0.5
    results = ResultsFile(tmp_path)
    results.append(old)
    assert results.rescore() == 1 and results.load()[0].scores.wrong_verified == 1.0
