"""Report metrics of the graph system, measured with the scripted model that writes (tests/agent/report_script.py):
the share of report sentences with a supported citation, supported citations per report, sentences removed, and a
judge's score only when eval.judge is on. A factoid question's report of key points has none of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deepresearch.agent.model.types import ChatRequest, Completion
from deepresearch.agent.trace.store import TraceStore
from deepresearch.evals.config import EvalSettings
from deepresearch.evals.data.dataset import EvalQuestion
from deepresearch.evals.reports.report import render_markdown
from deepresearch.evals.run.graph_system import run_graph
from deepresearch.evals.run.results import make_result
from deepresearch.evals.run.systems import SystemContext
from deepresearch.evals.run.tooling import EvalTools
from deepresearch.evals.scoring.aggregate import summarize
from deepresearch.evals.scoring.report_judge import JUDGE_SYSTEM

from tests.agent.conftest import DOCS as ADA_DOCS
from tests.agent.conftest import default_script
from tests.agent.fakes import DictToolbox
from tests.agent.report_script import DOCS, OPEN_QUESTION, CapableModel, capable_script

OPEN = EvalQuestion(id="open-1", question=OPEN_QUESTION, answer="not scored")
FACTOID = EvalQuestion(id="ada-1", question="When was Ada Lovelace born?", answer="1815")


class JudgingModel(CapableModel):
    """Writes the report, and as the judge gives every report 7 of 10."""

    async def complete(self, request: ChatRequest) -> Completion:
        if request.messages[0].content == JUDGE_SYSTEM:
            self.judged = getattr(self, "judged", 0) + 1
            return Completion(text=json.dumps({"score": 7}), prompt_token_ids=[1], completion_token_ids=[2],
                              logprobs=[-0.1], model=self.model_name)
        return await super().complete(request)


def context(tmp_path: Path, model, docs, judge: bool) -> SystemContext:
    from deepresearch.agent.config import AgentSettings

    tools = EvalTools(search_tool=None, open_tool=None, doc_id_for=lambda url: url.rsplit("/", 1)[-1],  # type: ignore[arg-type]
                      doc_text=lambda d: None, toolbox=DictToolbox(dict(docs)))
    return SystemContext(model=model, store=TraceStore(tmp_path / "t.db"), agent=AgentSettings(),
                         evals=EvalSettings(judge=judge), eval_id="e", tools=tools)


@pytest.mark.parametrize("judge", [False, True])
async def test_a_written_report_is_measured_sentence_by_sentence(tmp_path, judge):
    model = JudgingModel(capable_script())
    output = await run_graph(OPEN, context(tmp_path, model, DOCS, judge))
    assert output.report is not None and output.report.style == "written"
    scores = make_result("e", "graph", OPEN, output).scores
    assert scores.report_supported_share == 0.5  # 2 of the 4 sentences written were supported
    assert scores.report_supported_citations == 2.0 and scores.report_dropped == 2.0
    assert scores.report_judge == (0.7 if judge else None) and getattr(model, "judged", 0) == int(judge)


async def test_a_written_report_that_gives_way_to_quotes_counts_its_removed_sentences(tmp_path):
    """The model writes only what its quotes do not support: the report shows the checked quotes instead, and the two
    sentences it wrote count as removed (of 2 written + the quotes checked)."""
    model = JudgingModel(capable_script(faithful_too=False))
    output = await run_graph(OPEN, context(tmp_path, model, DOCS, judge=False))
    assert output.report is not None and output.report.style == "extractive"
    scores = make_result("e", "graph", OPEN, output).scores
    assert output.report.dropped >= 2 and output.report.lines == output.report.supported + output.report.dropped
    assert scores.report_dropped == float(output.report.dropped) and scores.report_supported_share < 1.0


async def test_a_factoid_report_has_no_report_metrics(tmp_path):
    model = JudgingModel(default_script())
    output = await run_graph(FACTOID, context(tmp_path, model, ADA_DOCS, judge=True))
    result = make_result("e", "graph", FACTOID, output)
    assert output.report is None and result.scores.report_supported_share is None
    assert getattr(model, "judged", 0) == 0  # nothing to judge: key points are the factoid path's
    summary = summarize([result], eval_id="e")
    assert summary.metric("graph", "report_supported_share").n == 0
    assert "report sentences with a supported citation | –" in render_markdown(summary, [], [])
