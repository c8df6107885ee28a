"""`train --from-runs` synthesizes over what the logged runs read: the sources from the trace store, their own local
web, the round's mix of replays and synthesized questions, and `--watch` reading new sources as runs arrive."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from deepresearch.agent.trace.store import TraceStore
from deepresearch.tools.base import ToolOutcome
from deepresearch.tools.config import ToolSettings
from deepresearch.train.config import SynthSettings, TrainSettings
from deepresearch.train.rounds.loop import RoundReport
from deepresearch.train.rounds.questions import TrainQuestion
from deepresearch.train.synth.feed import RunSourcesFeed
from deepresearch.train.synth.runs import sources_from_runs

from .synth_docs import DOCS


def read(store: TraceStore, question: str, pages: dict[str, str], tags: dict | None = None) -> str:
    """A run that opened each page (address → its markdown text), as the browser logs it."""
    run_id = store.start_run(question, {}, tags)
    for address, text in pages.items():
        title = text.splitlines()[0].lstrip("# ")
        store.log_tool_call(run_id, ToolOutcome(tool="open", input={"url": address},
                                                output={"url": address, "final_url": address, "title": title,
                                                        "text": text}))
    store.log_tool_call(run_id, ToolOutcome(tool="open", input={"url": "http://x/err"}, error="timeout"))
    store.finish_run(run_id, "finished", "an answer", "a report", [], {})
    time.sleep(0.01)
    return run_id


def pages(*names: str) -> dict[str, str]:
    return {f"https://example.org/{Path(n).stem.replace(' ', '_')}": DOCS[n] for n in names}


PLAYS = [n for n in DOCS if n.startswith("plays/")]


def test_the_sources_people_read_not_those_of_rollouts_or_evals(tmp_path):
    store = TraceStore(tmp_path / "t.db")
    read(store, "Who wrote The Rover?", pages("plays/The Rover.md", "plays/Aphra Behn.md"))
    read(store, "rollout", pages("plays/Thomas Killigrew.md"), {"train_round": 1})
    read(store, "eval", pages("plays/William Wycherley.md"), {"eval_id": "e"})
    docs = sources_from_runs(store)
    store.close()
    assert sorted(d.id for d in docs) == ["https://example.org/Aphra_Behn", "https://example.org/The_Rover"]
    assert {d.title for d in docs} == {"Aphra Behn", "The Rover"}


async def test_questions_over_the_runs_sources_search_their_own_web_and_watch_brings_new_ones(tmp_path):
    store = TraceStore(tmp_path / "t.db")
    read(store, "Who wrote The Rover?", pages(*PLAYS[:4]))
    tools = ToolSettings(data_dir=tmp_path / "data")
    lines: list[str] = []
    feed = RunSourcesFeed(tools, store, SynthSettings(questions=12), tmp_path / "synth", lines.append)
    try:
        assert await feed.refresh()
        assert not await feed.refresh()  # nothing new read: the same set, the same web
        first = feed.set
        assert first is not None and "from the 4 sources the logged runs read" in lines[0]
        questions = feed.questions(1, 3)
        assert len(questions) == 3 and all(feed.owns(q) for q in questions)
        assert not feed.owns(TrainQuestion(id="run-1", question="Who wrote The Rover?"))
        # A synthesized question's rollouts search the sources' own web, and find its gold document there.
        one_hop = next(q for q in first.train_questions() if q.kind == "one_hop")
        assert feed.toolbox is not None
        found = await feed.toolbox.get("search").invoke({"query": one_hop.question})
        urls = [h["url"] for h in found.output["hits"]]
        assert one_hop.gold_doc_ids[0] in {feed.doc_id_for(u) for u in urls}
        assert not set(first.held_out) & {feed.doc_id_for(u) for u in urls}
        # New runs read new sources: the next refresh synthesizes again, over all of them.
        read(store, "Who wrote The Country Wife?", pages(*PLAYS[4:]))
        assert await feed.refresh()
        assert feed.set is not None and feed.set.documents == len(PLAYS) and feed.set.corpus != first.corpus
        assert feed.synthesized()["made"]
    finally:
        await feed.close()
        store.close()


class Loop:
    def __init__(self):
        self.rounds: list[list[TrainQuestion]] = []
        self.synthesized: dict = {}

    @property
    def rounds_done(self) -> int:
        return len(self.rounds)

    async def run_round(self, questions):
        self.rounds.append(list(questions))
        return RoundReport(round=len(self.rounds))


async def test_a_fixed_round_mixes_replays_and_synthesized_questions_and_watch_adds_them():
    from deepresearch.app.commands.train import _mixed_picker, _watch_extra
    from deepresearch.train.rounds.schedule import fixed_rounds, watch_rounds

    class Feed:
        set = object()
        refreshed = 0

        def questions(self, k, count, seed=0):
            return [TrainQuestion(id=f"s{k}-{i}", question=f"synth {k}.{i}", kind="one_hop") for i in range(count)]

        def synthesized(self):
            return {"made": {"one_hop": 9}, "kept": {"one_hop": 7}}

        async def refresh(self):
            self.refreshed += 1
            return self.refreshed == 1

    cfg = TrainSettings()
    cfg.rollout.questions_per_round = 4
    replays = [TrainQuestion(id=f"run-{i}", question=f"asked {i}") for i in range(5)]
    loop = Loop()
    await fixed_rounds(loop, replays, cfg, 2, lambda r: None, pick=_mixed_picker(Feed(), loop, replays, cfg))
    for questions in loop.rounds:  # train.synth.from_runs_share 0.5 of each round
        assert sorted(q.kind or "given" for q in questions) == ["given", "given", "one_hop", "one_hop"]
    assert loop.synthesized["kept"] == {"one_hop": 7}
    # Too few replays: synthesized questions fill the round.
    loop = Loop()
    await fixed_rounds(loop, replays[:1], cfg, 1, lambda r: None, pick=_mixed_picker(Feed(), loop, replays[:1], cfg))
    assert sorted(q.kind or "given" for q in loop.rounds[0]) == ["given", "one_hop", "one_hop", "one_hop"]

    store_dir = Path(__import__("tempfile").mkdtemp())
    store = TraceStore(store_dir / "t.db")
    cfg.watch_poll_s, cfg.watch_min_new_runs = 0.05, 1
    loop, feed = Loop(), Feed()
    task = asyncio.create_task(watch_rounds(loop, store, cfg, None, 1, lambda r: None,
                                            extra=_watch_extra(feed, loop, cfg)))
    await asyncio.sleep(0.1)
    store.finish_run(store.start_run("a new question", {}), "finished", "x", "r", [], {})
    await asyncio.wait_for(task, timeout=5)
    store.close()
    assert [q.question for q in loop.rounds[0]] == ["synth 1.0", "synth 1.1", "a new question"]
    assert feed.refreshed == 1 and loop.synthesized["made"] == {"one_hop": 9}


def test_the_round_line_says_how_many_questions_of_each_kind_it_made_and_used():
    report = RoundReport(round=2, rollout_runs=8, questions={"one_hop": 2, "two_hop": 1, "unanswerable": 1},
                         synthesized={"made": {"one_hop": 30, "two_hop": 9}, "kept": {"one_hop": 28, "two_hop": 6}})
    assert "questions 2 one_hop + 1 two_hop + 1 unanswerable (synthesized, kept/made: 28/30 one_hop, 6/9 two_hop)" \
        in report.line()
    assert "questions" not in RoundReport(round=1, questions={"given": 4}).line()  # a QA file's round as before
