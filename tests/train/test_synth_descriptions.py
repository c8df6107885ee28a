"""How a sentence of a page describes a bridge entity E relative to the page's subject (train/synth/descriptions.py,
through chains.describe): each pattern on a sentence it reads, and a sentence where the clause is about something
else, E is one of several, or E's own page says E is something else, which it must not describe."""

from __future__ import annotations

from deepresearch.train.synth.chains import describe
from deepresearch.train.synth.corpus import SynthDoc


def described(title: str, text: str, entity: str, page: SynthDoc | None = None) -> str | None:
    """The description of `entity` in the (last) sentence of `text` that names it, on the page `title`."""
    doc = SynthDoc("a", title, text)
    unit = [u for u in doc.units() if entity in u.text][-1]
    found = describe(entity, unit.text.rindex(entity), unit, doc, page=page)
    return found.text if found is not None else None


def page(title: str, text: str) -> SynthDoc:
    return SynthDoc("b", title, text)


HE = page("Rudolf Hess", "Rudolf Hess (26 April 1894 – 17 August 1987) was a German politician. He was born in "
                         "Alexandria. His father was a merchant and he grew up there.")
SHE = page("Ilse Hess", "Ilse Hess (22 June 1900 – 7 September 1995) was a German poet. She was born in Hanover and "
                        "her father was a physician.")
MISSOURI = page("Missouri", "Missouri is a state in the Midwestern region of the United States.")
CHARLOTTE = page("Charlotte", "Charlotte is the largest city in the state of North Carolina.")
BERLIN = page("Berlin", "Berlin is the capital and largest city of Germany.")
NEVADA_FILM = page("Nevada (1944 film)", "Nevada is a 1944 western film starring Robert Mitchum.")
DUO = page("Twins (group)", "Twins are a Hong Kong Cantopop duo formed in 2001.")
EMPIRE = page("Austria-Hungary", "Austria-Hungary was an empire in Central Europe from 1867 to 1918.")


def test_a_made_thing_is_described_by_its_maker_and_a_list_or_another_clause_is_not():
    assert described("Jaws (film)", "Jaws is a 1975 American thriller film directed by Steven Spielberg.",
                     "Steven Spielberg") == "the director of Jaws"
    assert described("Machuca", "Machuca is a 2004 Chilean film written and directed by Andrés Wood.",
                     "Andrés Wood") == "the director of Machuca"
    assert described("Tammy (film)", "Tammy is a 2014 comedy film directed and co-written by Ben Falcone.",
                     "Ben Falcone") == "the director of Tammy"
    assert described("Billy Liar (film)", "Directed by John Schlesinger, it stars Tom Courtenay.",
                     "John Schlesinger") == "the director of Billy Liar"
    assert described("Dead Souls (band)", "Dead Souls was a rock band formed in 2005 by Linkin Park lead singer "
                                          "Chester Bennington.", "Chester Bennington") == "the founder of Dead Souls"
    assert described("2012 Raiders football team", "They were led by 17th-year head coach Dick Biddle.",
                     "Dick Biddle") == "the head coach of 2012 Raiders football team"
    # one of several makers, a share of the work, another work's maker, a maker of the novel it is based on
    assert described("Oh My Love", '"Oh My Love" is a song written by John Lennon and Yoko Ono.', "John Lennon") is None
    assert described("The Band", "The band was founded by vocalist Jimmy Farrar, guitarist Duane Roland and others.",
                     "Jimmy Farrar") is None
    assert described("Tammy (film)", "Tammy is a 2014 comedy film co-written by Ben Falcone.", "Ben Falcone") is None
    assert described("The Chase (film)", "The Chase is a 1946 film executive produced by Seymour Nebenzal.",
                     "Seymour Nebenzal") is None
    assert described("Rings (film)", "Rings is a 2017 horror film, a sequel to the film directed by Gore Verbinski.",
                     "Gore Verbinski") is None
    assert described("Superman Returns", "It is based on the DC Comics character Superman.", "Superman") is None


def test_a_work_is_described_by_who_made_it_and_a_film_by_its_producer_is_not():
    assert described("Riptide (album)", "Riptide is the eighth studio album by the British singer Robert Palmer.",
                     "Robert Palmer") == "the artist who recorded Riptide"
    assert described("Cold as the Clay", "Cold as the Clay is the second solo album by Bad Religion's vocalist Greg "
                                         "Graffin.", "Greg Graffin") == "the artist who recorded Cold as the Clay"
    assert described("Loaded Gun (album)", "Loaded Gun is the debut album from Canadian rock band Gloryhound.",
                     "Gloryhound") == "the artist who recorded Loaded Gun"
    assert described("Verdict (play)", "Verdict is a 1958 play by British mystery writer Agatha Christie.",
                     "Agatha Christie") == "the author of Verdict"
    assert described("Beautiful Eyes", "Beautiful Eyes is the second extended play (EP) by American singer Taylor "
                                       "Swift.", "Taylor Swift") == "the artist who recorded Beautiful Eyes"
    assert described("Maria Golovin", "Maria Golovin is an opera in three acts by Gian Carlo Menotti.",
                     "Gian Carlo Menotti") == "the composer of Maria Golovin"
    assert described("Red Sky (film)", "Red Sky is a 2001 film by producer Jerry Bruckheimer.",
                     "Jerry Bruckheimer") is None
    assert described("In Shock", "In Shock is the first single from the album Learn to Sing.", "Learn to Sing") is None
    assert described("Eddie Fisher Sings", "Eddie Fisher Sings is a 1952 album by Eddie Fisher.", "Eddie Fisher") \
        is None  # the title names E already


def test_a_film_is_described_by_the_author_of_what_it_is_based_on():
    assert described("The Grass Harp (film)", "The Grass Harp is a 1995 American comedy-drama film based on the "
                     "novella by Truman Capote.", "Truman Capote") == \
        "the author of the novella on which The Grass Harp is based"
    assert described("Dirty Weekend (film)", "Dirty Weekend is a British film directed by Michael Winner, based on "
                     "the novel of the same name by Helen Zahavi.", "Helen Zahavi") == \
        "the author of the novel on which Dirty Weekend is based"
    assert described("Willy Wonka", "It is an adaptation of the novel Charlie and the Chocolate Factory by Roald Dahl.",
                     "Roald Dahl") is None  # the novel is not what "based on" names


def test_a_film_with_one_star_is_described_by_it_and_a_cast_list_is_not():
    assert described("In Person (film)", "In Person is a 1935 film starring Ginger Rogers.", "Ginger Rogers") == \
        "the star of In Person"
    assert described("Coal Miner's Daughter (film)", "Coal Miner's Daughter is a 1980 film. It stars Sissy Spacek as "
                     "Loretta, a role that earned her an award.", "Sissy Spacek") == "the star of Coal Miner's Daughter"
    assert described("The Boys (1991 film)", "The Boys is a drama film starring James Woods and John Lithgow.",
                     "James Woods") is None
    assert described("Wildlife Vet", "It stars Alicia Silverstone and veterinarian Dave Jessup.",
                     "Alicia Silverstone") is None


def test_a_possessive_role_of_the_page_is_described_and_one_of_another_name_is_not():
    ikea = "IKEA is a Swedish furniture company. Its founder, Ingvar Kamprad, was born in 1926."
    assert described("IKEA", ikea, "Ingvar Kamprad") == "the founder of IKEA"
    covey = "Sean Covey (born 1964) is an American author. He worked with his father Stephen Covey."
    assert described("Sean Covey", covey, "Stephen Covey") == "the father of Sean Covey"
    bush = "Bush is a British rock band. The band's lead singer Gavin Rossdale wrote most songs."
    assert described("Bush (band)", bush, "Gavin Rossdale") == "the lead singer of Bush"
    hume = "H. Ross Hume (born 1919) was a cyclist. He and his twin brother, Robert Hume, rode in 1944."
    assert described("H. Ross Hume", hume, "Robert Hume") == "the twin brother of H. Ross Hume"
    # a son among several; "his" after another name is that name's; "E's" is E's, not E
    assert described("Sean Covey", "Sean Covey (born 1964) is an American author. He lives with his son Tom Covey.",
                     "Tom Covey") is None
    assert described("Brad Hume", "Brad Hume (born 1950) is a painter. He met Ralph Lane and his wife Mary Lane.",
                     "Mary Lane") is None
    assert described("Prayer (song)", "It was inspired by the death of vocalist David Draiman's grandfather.",
                     "David Draiman") is None


def test_a_parent_or_a_spouse_is_described_the_right_way_round():
    hess = "Wolf Hess (18 November 1937 – 24 October 2001) was the son of Rudolf Hess."
    assert described("Wolf Hess", hess, "Rudolf Hess", HE) == "the father of Wolf Hess"  # E is the parent
    assert described("Wolf Hess", hess.replace("Rudolf", "Ilse"), "Ilse Hess", SHE) == "the mother of Wolf Hess"
    assert described("Wolf Hess", hess, "Rudolf Hess") is None  # which parent: E's page must say
    kong = "China Kong (born 1960) is an American actress. She is the widow of director Donald Cammell."
    cammell = page("Donald Cammell", "Donald Cammell (1934 – 1996) was a Scottish director. He directed his first "
                                     "film in 1968.")
    assert described("China Kong", kong, "Donald Cammell", cammell) == "the husband of China Kong"
    assert described("China Kong", kong, "Donald Cammell") == "the spouse of China Kong"
    landis = "Deborah Landis (born 1952) is a designer. She is married to director John Landis."
    assert described("Deborah Landis", landis, "John Landis") == "the spouse of Deborah Landis"
    # the son of someone else, and one parent of two
    assert described("Evelyn Einstein", "Evelyn Einstein (1941 – 2011) was the adopted daughter of Hans Einstein, the "
                     "son of Albert Einstein.", "Albert Einstein", HE) is None
    assert described("Wolf Hess", hess.replace(".", " and Ilse Hess."), "Rudolf Hess", HE) is None


def test_a_group_or_a_parent_company_is_described_and_a_member_of_something_else_is_not():
    assert described("Kevin Max", "Kevin Max (born 1967) is a singer. He is a member of the Christian pop group "
                     "DC Talk.", "DC Talk") == "the group Kevin Max is a member of"
    assert described("Charlene Choi", "Charlene Choi (born 1982) is a singer. She is a founding member of Twins.",
                     "Twins", DUO) == "the group Charlene Choi is a founding member of"  # its page: "(group)"
    assert described("Terri Nunn", "Terri Nunn (born 1961) is a singer. She is best known as the lead vocalist of "
                     "the new wave band Berlin.", "Berlin") == "the band whose lead vocalist is Terri Nunn"
    assert described("Dow AgroSciences", "Dow AgroSciences is a wholly owned subsidiary of the Dow Chemical Company.",
                     "Dow Chemical Company") == "the parent company of Dow AgroSciences"
    assert described("Zagreb", "In 1873 Zagreb was part of Austria-Hungary.", "Austria-Hungary") is None  # not T-first
    assert described("Zagreb", "Zagreb was part of Austria-Hungary.", "Austria-Hungary", EMPIRE) == \
        "the empire Zagreb was part of"
    assert described("Jean Sueur", "Jean Sueur (born 1947) is a member of the Senate of France.", "France") is None
    assert described("Joe Krupa", "Joe Krupa (born 1950) was a boxer. He is a member of the Chicagoland Sports Hall "
                     "of Fame.", "Chicagoland Sports Hall of Fame") is None  # not a group, as far as we know


def test_a_place_is_described_by_what_its_page_says_it_is_and_a_qualified_or_other_place_is_not():
    assert described("Eastland Mall", "Eastland Mall was a shopping mall located in Charlotte.", "Charlotte",
                     CHARLOTTE) == "the city where Eastland Mall was located"
    assert described("Arrowhead Stadium", "Arrowhead Stadium is a football stadium in Kansas City, Missouri, United "
                     "States.", "Missouri", MISSOURI) == "the state where Arrowhead Stadium is located"
    assert described("Classic Cinemas", "Headquartered in Berlin, the company operates 14 cinemas.", "Berlin",
                     BERLIN) == "the city where Classic Cinemas is headquartered"
    assert described("My Niece Susanne", "It is set in Paris at the beginning of the century.", "Paris",
                     page("Paris", "Paris has been governed as a commune since 1860.")) == \
        "the place where My Niece Susanne is set"
    assert described("Knapp Airport", "Knapp Airport is an airport located in Berlin, Vermont.", "Berlin",
                     BERLIN) is None  # another Berlin
    assert described("Boulder City", "Boulder City is a city in Clark County, Nevada.", "Nevada", NEVADA_FILM) is None
    assert described("Lake Tahoe Resort", "It is located near Lake Tahoe in Nevada.", "Nevada", MISSOURI) is None


def test_a_birthplace_and_a_namesake_are_described_and_another_subject_is_not():
    assert described("Andre Wood", "Andre Wood (born 1960) is a painter. He was born in Paris.", "Paris") == \
        "the birthplace of Andre Wood"
    assert described("Charles Andrews", "Charles Andrews (born 1814) was a politician. He was born in Paris, Maine.",
                     "Paris", page("Paris", "Paris is the capital of France.")) is None  # Paris, Maine
    kilby = page("Jack Kilby", "Jack Kilby (1923 – 2005) was an engineer. He invented the integrated circuit.")
    assert described("Golden Medal", "The Golden Medal is an award. The award is named after the engineer Jack Kilby, "
                     "an inventor.", "Jack Kilby", kilby) == "the person Golden Medal is named after"
    assert described("Kilby Award", "The Kilby Award is an award. It is named after Jack Kilby.", "Jack Kilby",
                     kilby) is None  # the title gives E's name away
    assert described("Arizona State Route 51", "Arizona State Route 51 is a highway. The peak was named after Lori "
                     "Piestewa.", "Lori Piestewa", SHE) is None  # the peak is not the highway
