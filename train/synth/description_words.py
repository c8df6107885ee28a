"""The words descriptions.py reads a clause with: verbs that name who made a thing, kinds of works and who makes
them, relations a possessive or kinship names, kinds of groups and places. Plain English vocabulary, no dataset's
phrasing."""

from __future__ import annotations

import re

AGENTS = {
    "directed": "director", "written": "writer", "produced": "producer", "composed": "composer",
    "founded": "founder", "co-founded": "co-founder", "established": "founder", "created": "creator",
    "designed": "designer", "developed": "developer", "published": "publisher", "owned": "owner",
    "built": "builder", "invented": "inventor", "performed": "performer", "sung": "singer", "painted": "painter",
    "illustrated": "illustrator", "edited": "editor", "discovered": "discoverer", "coached": "coach",
    "managed": "manager", "hosted": "host", "narrated": "narrator", "led": "leader", "operated": "operator",
    "manufactured": "manufacturer", "distributed": "distributor", "headed": "head", "chaired": "chair",
    "translated": "translator", "photographed": "photographer", "choreographed": "choreographer",
    "voiced": "voice actor", "recorded": "recording artist", "formed": "founder", "sculpted": "sculptor",
    "commissioned": "commissioner", "played": "actor", "portrayed": "actor",
}
# What kind of work a page is → who made it: "T is a novel by E" → the author of T.
WORKS = {
    **dict.fromkeys(("novel", "novella", "book", "poem", "play", "story", "memoir", "essay", "biography",
                     "collection"), "author"),
    **dict.fromkeys(("album", "ep", "single", "song", "mixtape"), "recorder"),
    **dict.fromkeys(("opera", "symphony", "concerto", "sonata", "oratorio", "cantata", "operetta"), "composer"),
    **dict.fromkeys(("painting", "portrait", "fresco", "altarpiece", "triptych"), "painter"),
    "film": "director", "sculpture": "sculptor", "statue": "sculptor",
}
# Words that start a phrase about something else ("based on the novel by E", "the sequel to …").
OTHER = frozenset({"of", "on", "from", "to", "with", "about", "after", "for", "than", "like", "against", "between",
                    "under", "into", "following", "featuring", "adaptation", "remake", "sequel", "version", "cover",
                    "who", "which", "that", "whose", "when", "while", "where", "as", "at", "", "previously",
                    "originally", "later"})
NUMBERS = frozenset({"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"})
COPULAS = {"is": "is", "are": "is", "was": "was", "were": "was"}
# Relations a possessive names: "its founder, E", "his father E", "the band's lead singer E".
RELATIONS = frozenset({
    "father", "mother", "wife", "husband", "widow", "widower", "stepfather", "stepmother", "fiancé", "fiancée",
    "founder", "co-founder", "owner", "president", "chairman", "chairwoman", "ceo", "leader", "manager", "coach",
    "captain", "frontman", "singer", "vocalist", "guitarist", "bassist", "drummer", "keyboardist", "producer",
    "creator", "publisher", "label", "capital"})
# Relations several may hold: only with a word that singles one out ("his eldest son", "her only brother").
KIN = frozenset({"son", "daughter", "brother", "sister", "child", "grandson", "granddaughter", "nephew", "niece"})
SINGLING = frozenset({"only", "eldest", "oldest", "youngest", "twin"})
MODIFIERS = frozenset({"lead", "former", "first", "second", "third", "founding", "original", "longtime",
                        "executive", "rhythm", "record", "principal", "head", "co", "current", *SINGLING})
KINSHIP = {"son": "parent", "daughter": "parent", "wife": "spouse", "husband": "spouse", "widow": "spouse",
            "widower": "spouse"}
BAND_ROLES = frozenset({"vocalist", "singer", "guitarist", "bassist", "drummer", "keyboardist", "frontman",
                         "founder", "co-founder", "leader", "president", "chairman", "captain", "owner"})
FILLER = frozenset({"a", "an", "the", "also", "now", "still", "best", "known", "as", "wholly", "owned",
                     "wholly-owned", "majority-owned"})
GROUPS = ("band", "group", "duo", "trio", "quartet", "party", "team", "club", "society", "organization",
           "organisation", "association", "orchestra", "ensemble", "choir", "collective", "league", "alliance",
           "union", "family", "dynasty", "troupe")
PLACES = ("city", "town", "village", "hamlet", "suburb", "borough", "municipality", "commune", "county", "state",
           "province", "country", "region", "island", "neighborhood", "neighbourhood", "district", "township",
           "capital", "empire", "kingdom", "republic", "continent")
REGIONS = ("state", "province", "county", "region")
COUNTRIES = ("United States", "USA", "U.S.", "US", "United Kingdom", "UK", "Canada", "Australia")
# What stands in a place: "T is a village in E" → the country where T is located.
SITES = frozenset({*PLACES, "community", "river", "lake", "mountain", "park", "airport", "station", "school",
                    "university", "college", "hospital", "museum", "church", "castle", "bridge", "stadium", "arena",
                    "hotel", "casino", "mall", "building", "highway", "road", "street", "square", "theatre", "theater",
                    "company", "newspaper"})
PARENTS = ("subsidiary", "division", "imprint", "unit", "brand")
LOCATED = {"located": "located", "situated": "located", "based": "based", "headquartered": "headquartered",
            "set": "set", "born": "born"}
NATIONALITY = re.compile(r"^(?:[A-Z][a-z]+-)?[A-Z][a-z]+(?:an|ish|ese|ch|sh|ic|i|k)$")
