"""Countries by their demonyms and names ("American", "United States", "U.S." → "united states"): what a
nationality question asks for and what "the same country" compares. The countries pool questions ask
about most; one missing is simply not decided."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# country: (its demonyms, its names)
_COUNTRIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "united states": (("american",), ("united states", "u.s.", "us", "usa", "america", "united states of america")),
    "united kingdom": (("british", "english", "scottish", "welsh"),
                       ("united kingdom", "uk", "britain", "great britain", "england", "scotland", "wales")),
    "ireland": (("irish",), ("ireland",)), "canada": (("canadian",), ("canada",)),
    "australia": (("australian",), ("australia",)), "new zealand": (("new zealander",), ("new zealand",)),
    "france": (("french",), ("france",)), "germany": (("german",), ("germany",)),
    "italy": (("italian",), ("italy",)), "spain": (("spanish",), ("spain",)),
    "portugal": (("portuguese",), ("portugal",)), "netherlands": (("dutch",), ("netherlands", "holland")),
    "belgium": (("belgian",), ("belgium",)), "switzerland": (("swiss",), ("switzerland",)),
    "austria": (("austrian",), ("austria",)), "sweden": (("swedish",), ("sweden",)),
    "norway": (("norwegian",), ("norway",)), "denmark": (("danish",), ("denmark",)),
    "finland": (("finnish",), ("finland",)), "poland": (("polish",), ("poland",)),
    "russia": (("russian",), ("russia",)), "greece": (("greek",), ("greece",)), "japan": (("japanese",), ("japan",)),
    "china": (("chinese",), ("china",)), "south korea": (("south korean", "korean"), ("south korea", "korea")),
    "india": (("indian",), ("india",)), "pakistan": (("pakistani",), ("pakistan",)),
    "brazil": (("brazilian",), ("brazil",)), "mexico": (("mexican",), ("mexico",)),
    "argentina": (("argentine", "argentinian"), ("argentina",)), "chile": (("chilean",), ("chile",)),
    "colombia": (("colombian",), ("colombia",)), "cuba": (("cuban",), ("cuba",)),
    "south africa": (("south african",), ("south africa",)), "nigeria": (("nigerian",), ("nigeria",)),
    "egypt": (("egyptian",), ("egypt",)), "israel": (("israeli",), ("israel",)),
    "palestine": (("palestinian",), ("palestine",)), "turkey": (("turkish",), ("turkey",)),
    "iran": (("iranian",), ("iran",)), "philippines": (("filipino",), ("philippines",)),
    "hungary": (("hungarian",), ("hungary",)), "czech republic": (("czech",), ("czech republic",)),
    "ukraine": (("ukrainian",), ("ukraine",)),
}
COUNTRY_OF = {word: country for country, (demonyms, names) in _COUNTRIES.items() for word in demonyms + names}
DEMONYMS = frozenset(d for demonyms, _ in _COUNTRIES.values() for d in demonyms)
# Any demonym or country name, longest first so that "south korean" wins over "korean".
COUNTRY_WORDS = "|".join(sorted((re.escape(w) for w in COUNTRY_OF), key=len, reverse=True))
_MENTION = re.compile(rf"(?<![\w.])({COUNTRY_WORDS})(?![\w])")


@dataclass(frozen=True)
class CountryMention:
    text: str  # as written: "American", "U.S."
    country: str
    demonym: bool
    start: int


def country_mentions(sentence: str) -> Iterator[CountryMention]:
    """The countries a sentence names, by demonym or by name, capitalised as a name is."""
    for match in _MENTION.finditer(sentence.lower()):
        written = sentence[match.start():match.end()]
        if written[:1].isupper():
            word = match.group(1)
            yield CountryMention(written, COUNTRY_OF[word], word in DEMONYMS, match.start())
