"""One-hop questions of a page's sentences (train/synth/prose.py) and where facts about a name are found
(candidates.FactBook): each rule on a real-looking sentence it asks, and one it must not ask (the sentence is about
another thing than the page, the answer joins a name and a place, the question word does not fit the verb, a
page of the same name once the disambiguation is stripped)."""

from __future__ import annotations

import random

from deepresearch.train.synth.candidates import FactBook
from deepresearch.train.synth.corpus import SynthCorpus, SynthDoc
from deepresearch.train.synth.prose import lemma, prose_facts


def asked(title: str, text: str) -> dict[str, str]:
    """question → answer of every prose fact of the page."""
    doc = SynthDoc("a", title, text)
    return {f.question: f.answer for f in prose_facts(doc, doc.units())}


BAND = "Sugar Ray is an American rock band from Newport Beach, California. "
ALBUM = "Floored is the second studio album by American rock band Sugar Ray. "


def test_a_definite_subject_is_the_page_only_when_the_page_says_it_is_that_kind_of_thing():
    assert asked("Floored", ALBUM + "The album was released on June 24, 1997.") \
        == {"When was Floored released?": "June 24, 1997"}
    assert asked("Sugar Ray", BAND + "The album was released on June 12, 2001.") == {}  # the band was not released
    assert asked("Sugar Ray", BAND + "The group was formed in 1986.") == {"In what year was Sugar Ray formed?": "1986"}
    assert asked("Floored", ALBUM + "The band's first album was released in 1995.") == {}  # not the album's band
    assert asked("Sugar Ray", BAND + "The band's first album was released in 1995.") \
        == {"In what year was Sugar Ray's first album released?": "1995"}
    # the kind from the title's disambiguation, or "the building" of a hotel
    assert asked("Nevada (1944 film)", "The film was directed by Edward Killy.") \
        == {"Who directed Nevada?": "Edward Killy"}
    hotel = "The Occidental Hotel is a historic hotel in San Francisco. The building was demolished in 1906."
    assert asked("Occidental Hotel", hotel) == {"In what year was Occidental Hotel demolished?": "1906"}
    assert asked("Toote Khilone", "Toote Khilone is a 1978 Bollywood film produced by Prem Sawhney. "
                                  "The screenplay was written by Ketan Anand.") == {}  # the screenplay is not the film


def test_it_is_the_page_only_when_the_first_sentence_is_about_the_page():
    mall = "Warwick Mall is an enclosed shopping mall in Warwick, Rhode Island. It opened in 1970."
    assert asked("Warwick Mall", mall) == {"In what year did Warwick Mall open?": "1970"}
    flag = "The Somali flag is an ethnic flag conceived to represent ethnic Somalis. "
    assert asked("Somalis", flag + "It was created in 1954.") == {}  # the flag was created, not the Somalis
    assert asked("Somalis", flag + "The flag was adopted in 1954.") == {}
    assert asked("Guin, Alabama", "Guin is a city in Marion County, Alabama. It incorporated in December 1889.") \
        == {"When did Guin, Alabama incorporate?": "December 1889"}


def test_a_name_inside_the_title_is_the_page_only_when_it_names_the_page():
    assert asked("Prehistoric North Africa", "North Africa is defined by the United Nations to consist of seven "
                                             "countries.") == {"Who defined North Africa?": "United Nations"}
    assert asked("Tim Keefe", "Tim Keefe (born 1857) was an American pitcher. Keefe was elected to the Baseball Hall "
                              "of Fame in 1964.")["In what year was Tim Keefe elected to the Baseball Hall of Fame?"] \
        == "1964"


def test_an_answer_joining_a_name_and_a_place_is_asked_only_where_it_is():
    cardinale = "Claudia Cardinale (born 15 April 1938) is an Italian actress. "
    born = asked("Claudia Cardinale", cardinale + "She was born Claude Joséphine Rose Cardinale in La Goulette, "
                                                  "Tunisia.")
    assert born == {"When was Claudia Cardinale born?": "15 April 1938"}  # no "What was Claudia Cardinale born?"
    assert asked("Claudia Cardinale", cardinale + "She was born in La Goulette.")["Where was Claudia Cardinale born?"] \
        == "La Goulette"
    assert asked("Barry Pepper", "Barry Pepper played Private Daniel Jackson in Saving Private Ryan.") == {}
    assert asked("Joe Krupa", "Joe Krupa attended Purdue University.") \
        == {"What did Joe Krupa attend?": "Purdue University"}
    assert asked("Der Rosenkavalier", "Der Rosenkavalier is an opera by Richard Strauss. "
                                      "It was first performed at the Königliches Opernhaus in Dresden.") \
        == {"Where was Der Rosenkavalier performed?": "Königliches Opernhaus in Dresden"}


def test_the_question_word_fits_what_the_verb_takes():
    assert asked("Kawhi Leonard", "Kawhi Leonard was named Finals Most Valuable Player.") \
        == {"What was Kawhi Leonard named?": "Finals Most Valuable Player"}
    bridge = "Werra Viaduct is a bridge. It is located 33 metres from the river."
    assert asked("Werra Viaduct", bridge) == {}  # a measure is no sum of money
    assert asked("The Nut Job", "The Nut Job is a 2014 film. It grossed $64.3 million during its run.") \
        == {"How much did The Nut Job gross?": "$64.3 million"}
    assert asked("Sugababes", "Sugababes are a girl group. They released three studio albums before 2005.") \
        == {"How many studio albums did Sugababes release?": "three"}
    assert asked("Tim Hecker", "Tim Hecker has released eight albums and a number of EPs.") \
        == {"How many albums has Tim Hecker released?": "eight"}
    assert asked("Mansoor Ahmed", "Mansoor Ahmed played three consecutive World Cups.") == {}  # "… consecutive did …?"
    assert asked("Northern Region", "Northern Region is a region. It is composed of four census divisions.") == {}
    assert asked("Nathaniel Mendez-Laing", "Nathaniel Mendez-Laing transferred to Peterborough United.") \
        == {"Where did Nathaniel Mendez-Laing transfer to?": "Peterborough United"}
    assert asked("Xavi Hernández", "Xavi Hernández became the playmaker after an injury to Pep Guardiola.") == {}
    book = "Dabestan-e Mazaheb is a book. It is written in Persian."
    assert asked("Dabestan-e Mazaheb", book) == {}  # a language, not a where
    assert asked("Ian Holm", "Ian Holm won the BAFTA Award for Best Actor in a Supporting Role.") == {}
    assert asked("Latvia", "Latvia is a country. It is bordered by Estonia to the north.") == {}  # "Who bordered …?"
    assert asked("Tom Shively", "Tom Shively lost to Republican Lindell Shumake.") == {}  # "Where did … lose to?"
    film = "Casino Royale (2006) is a spy film. He is James Bond and he plays cards."
    assert asked("Casino Royale (2006 film)", film) == {}  # "When was Casino Royale born?": a year, no birth
    assert asked("Aphra Behn", "Aphra Behn (1640 – 1689) was a playwright. She was a spy.") \
        == {"In what year was Aphra Behn born?": "1640", "In what year did Aphra Behn die?": "1689"}


def test_lemmas_of_verbs_in_er_and_our():
    assert [lemma(w) for w in ("garnered", "partnered", "toured", "premiered", "adhered", "entered")] == \
        ["garner", "partner", "tour", "premiere", "adhere", "enter"]


def book_of(*pages: tuple[str, str]) -> FactBook:
    corpus = SynthCorpus([SynthDoc(str(i), title, text) for i, (title, text) in enumerate(pages)], index=object())
    book = FactBook(corpus, random.Random(0))
    book.serve([doc.id for doc in corpus], set())
    return book


def test_pages_of_one_name_keep_their_facts_apart():
    state = ("Nevada", "Nevada is a state in the Western United States. It was admitted to the Union in 1864.")
    film = ("Nevada (1944 film)", "Nevada is a 1944 western film. It was directed by Edward Killy.")
    jaws = ("Jaws (film)", "Jaws is a 1975 thriller film. It was directed by Steven Spielberg.")
    book = book_of(state, film, jaws)
    assert {f.answer for f in book.about("Nevada", not_in="")} == {"1864", "Union"}  # not the film's director
    assert {f.answer for f in book.about("Jaws", not_in="")} == {"Steven Spielberg"}  # the one page of that name
    assert book.about("Nevada", not_in="0") == []
    # two pages of the name and none without a disambiguation: neither is "Nevada"
    assert book_of(film, ("Nevada (album)", "Nevada is an album. It was released in 2003.")).about("Nevada", "") == []
