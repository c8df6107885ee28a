"""The writer's candidates are re-sorted by how much of the question each one's unit covers (trust/ranking.py)."""

from __future__ import annotations

from deepresearch.agent.config import AgentSettings
from deepresearch.agent.reader import ABOUT_WEIGHT, EvidenceSentence, RelevanceReader, by_relevance, read_units
from deepresearch.agent.reader.answers.candidates import Candidate, rank_candidates

from .conftest import default_script, run
from .fakes import ScriptedModel

URL = "local://pottery/log.txt"
LOG = [EvidenceSentence(u.text, 0, "Pottery log", url=URL, position=i, kind=u.kind)
       for i, u in enumerate(read_units("2023-09-30 10:15 PK Kiln KX-40 delivered to the studio by the carrier.\n"
                                        "2023-11-14 17:00 PK Shelves fired so far: 12.\n"))]
QUESTION = "On what date was the new kiln delivered to the studio?"


def test_a_candidate_whose_unit_covers_more_of_the_question_moves_up():
    delivered, fired = LOG[0].text, LOG[1].text
    # the features (say) tie-break the other way: a later stamped line, nearer words
    cands = [Candidate("2023-11-14", 7.0, fired, 0, URL), Candidate("2023-09-30", 6.6, delivered, 0, URL)]
    reader = RelevanceReader(QUESTION, LOG)
    covered = {c.text: reader.of_answer(c.text, c.url, c.quote).score for c in cands}
    assert covered["2023-09-30"] - covered["2023-11-14"] > 0.4 / ABOUT_WEIGHT
    ranked = by_relevance(cands, reader)
    assert [c.text for c in ranked] == ["2023-09-30", "2023-11-14"]
    assert ranked[0].score == 6.6 + ABOUT_WEIGHT * covered["2023-09-30"]
    assert ranked[0].features == cands[1].features  # the confidence still reads the features alone


def test_equally_relevant_candidates_keep_the_features_order():
    reader = RelevanceReader(QUESTION, LOG)
    ranked = rank_candidates(QUESTION, LOG, k=5)
    same = [Candidate(c.text, c.score, LOG[0].text, c.source, URL) for c in ranked]
    assert [c.text for c in by_relevance(same, reader)] == [c.text for c in same]
    assert by_relevance([], reader) == []


async def test_the_writer_ranks_candidates_with_their_relevance(toolbox, store, monkeypatch):
    from deepresearch.agent.reader.trust import ranking

    question = "Who wrote the first published algorithm for the engine?"
    logged = {}
    for weight in (0.0, ranking.ABOUT_WEIGHT):
        monkeypatch.setattr(ranking, "ABOUT_WEIGHT", weight)
        model = ScriptedModel(default_script(("Ada Lovelace",)))
        model.scorer = lambda prompt, cand: -1.0
        result = await run(model, toolbox, store, question=question, settings=AgentSettings(min_answer_confidence=0.0))
        cands = store.events(result.run_id, "answer_scores")[0].payload["candidates"]
        logged[weight] = {c["text"]: c["features"] for c in cands}
    plain, ranked = logged.values()
    assert plain.keys() == ranked.keys()
    # the logged feature score (what the trainer re-scores a run by) carries the relevance term
    assert all(ranked[t] >= plain[t] for t in plain) and any(ranked[t] > plain[t] + 0.5 for t in plain)
