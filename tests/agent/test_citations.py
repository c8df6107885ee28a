"""The citation check: the quote is in its source, and the quote supports the point citing it."""

from __future__ import annotations

from deepresearch.agent.graph.citations import check_citation, unsupported_terms
from deepresearch.agent.graph.state import Finding

BEHN = "The City Heiress is a play by Aphra Behn produced in 1682."
SOURCE = f"The City Heiress, or Sir Timothy Treat-all is a Restoration comedy. {BEHN} It was a success."


def finding(quote: str = BEHN) -> Finding:
    return Finding(step_id=1, claim="", quote=quote, source="local://demo/behn", title="The City Heiress",
                   doc_id="behn", start=0, end=0)


def test_a_point_naming_someone_its_quote_does_not_is_unsupported():
    # The README main job's failure: a point about John Burgoyne citing a quote that names Aphra Behn.
    cite = check_citation(2, finding(), "The City Heiress is a comedy play by John Burgoyne.", lambda _: SOURCE)
    assert not cite["verified"]
    assert "Burgoyne" in cite["reason"] and "does not support" in cite["reason"]


def test_a_point_whose_names_and_numbers_are_in_its_quote_is_verified():
    cite = check_citation(1, finding(), "Aphra Behn wrote The City Heiress, staged in 1682.", lambda _: SOURCE)
    assert cite["verified"] and cite["reason"] == ""


def test_numbers_and_dates_count_and_the_title_supports_too():
    assert unsupported_terms("It was produced in 1683.", BEHN) == ["1683"]
    assert unsupported_terms("He was born there.", "He was born in London.") == []
    assert unsupported_terms("Aphra Behn's play", "She wrote it.", title="Aphra Behn") == []


def test_a_quote_missing_from_the_source_fails_first():
    cite = check_citation(1, finding(), "Aphra Behn wrote it.", lambda _: "A different page.")
    assert not cite["verified"] and cite["reason"] == "quote not found in the source"


def test_a_bare_yes_or_no_point_is_not_verified():
    # Seen in the session-6 eval: points "yes" and "no" of one report, both verified, citing unrelated sentences.
    for point in ("yes", "No.", "The answer is yes"):
        cite = check_citation(1, finding(), point, lambda _: SOURCE)
        assert not cite["verified"] and cite["reason"] == "the point says nothing a quote could support", point
    assert check_citation(1, finding(), "yes, a play by Aphra Behn", lambda _: SOURCE)["verified"]
