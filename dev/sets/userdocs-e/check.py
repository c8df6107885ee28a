#!/usr/bin/env python3
"""Validator for userdocs-e: do the questions in questions.jsonl hold against the files in docs/?

Needs only the standard library and the `pdftotext` command (poppler-utils).
Usage: python3 check.py        exit 0 = pass, 1 = problems found, 2 = cannot run.

Text matching: casefold, then every run of whitespace (newlines, tabs, no-break spaces) becomes
one space. HTML is turned into text first (markup dropped, entities decoded, a line break
around every cell and block element). A scorer should use the same rule.
"""
from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

ROOT = Path(__file__).resolve().parent
DOCS = ROOT / "docs"
SRC = ROOT / "src"
QUESTIONS = ROOT / "questions.jsonl"

WORLD_PREFIX = {"bakery": "bake", "school-trip": "trip"}
EXPECTED_TYPES = {"lookup": 4, "table": 4, "superseded": 4, "number": 4, "date": 4, "identifier": 4,
                  "two-hop": 4, "comparison": 3, "yes_no": 3, "unanswerable": 6}
# per world: 2 of every type, except comparison / yes_no split 2+1 and 1+2, unanswerable 3 each
EXPECTED_BY_WORLD = {
    "bakery": {**{t: 2 for t in EXPECTED_TYPES}, "comparison": 2, "yes_no": 1, "unanswerable": 3},
    "school-trip": {**{t: 2 for t in EXPECTED_TYPES}, "comparison": 1, "yes_no": 2, "unanswerable": 3},
}
# every person named in full in the documents; none may appear in a sibling set
PEOPLE = (
    # bakery
    "Fiona Marr", "Callum Marr", "Isla Marr", "Agata Wróblewska", "Ruaridh Buchanan",
    "Morag Tennant", "Lorna Kerr", "Ewan Baird", "Dev Chaudhry", "Morven Tennent",
    "Jean Rattray", "Alasdair Gow", "Sanjay Mistry", "Kirsten Lyall", "John Niven",
    # school-trip
    "Nicola Fenwick", "Raj Bhattacharya", "Gemma Stott", "Oliver Drummond", "Hannah Okafor",
    "Bev Aldous", "Dawn Heseltine", "Kwame Asante", "Sally Brough", "Marcia Quayle",
    "Sheila Pargeter", "Hannah O'Connor", "Stan Pilling", "Caroline Whitfield",
    "Claire Bannister", "Tom Cawthorne", "Leanne Ridgway", "Jo Hartley", "Samira Akhtar",
    "Rachel Lumb", "Mark Tolson", "Kerry Thwaites", "Priya Mehta", "Dan Jowett",
    "Steve Greenhalgh", "Yusuf Nadeem", "Helen Wardle", "Stacey Entwistle", "Anna Crabtree",
    "Rukhsana Mirza", "Kayleigh Dunn", "Gary Whittaker", "Louise Kershaw", "Debbie Pickles",
    "Siobhan Farrell", "Emma Sutcliffe", "Craig Holroyd", "Kate Brierley", "Jenny Lau",
    "Paul Duckworth", "Imran Shafiq", "Tasha Riley",
)
WORDS_MIN, WORDS_MAX = 300, 1500   # whitespace-separated words per document (HTML: visible text)
BASE_KEYS = {"id", "question", "answer", "answer_aliases", "gold_doc_ids", "type", "world",
             "evidence", "distractors"}
DOC_SUFFIXES = {".md", ".txt", ".html", ".csv", ".pdf"}
SIZE_LIMIT = 1_000_000          # bytes for the whole folder
COPY_WINDOW = 7                 # a question may not share this many consecutive words with a doc


class HtmlToText(HTMLParser):
    """Keeps visible text; puts a line break around cells and blocks so cells never run together."""

    BLOCKS: ClassVar[frozenset[str]] = frozenset({
        "p", "div", "br", "li", "ul", "ol", "tr", "td", "th", "table", "thead", "tbody",
        "h1", "h2", "h3", "h4", "h5", "h6", "header", "footer", "nav", "section", "title",
        "caption", "pre", "blockquote", "dt", "dd"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in ("script", "style"):
            self.hidden += 1
        elif tag in self.BLOCKS:
            self.out.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.hidden = max(0, self.hidden - 1)
        elif tag in self.BLOCKS:
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.out.append(data)


def normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def bare_words(text: str) -> list[str]:
    return re.findall(r"\w+", text.casefold())


def document_text(path: Path) -> str:
    if path.suffix == ".pdf":
        done = subprocess.run(["pdftotext", "-enc", "UTF-8", "-q", str(path), "-"],
                              capture_output=True, check=True)
        return done.stdout.decode("utf-8")
    raw = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        parser = HtmlToText()
        parser.feed(raw)
        parser.close()
        return "".join(parser.out)
    return raw


class Checker:
    def __init__(self) -> None:
        self.problems: list[str] = []
        self.texts: dict[str, str] = {}      # "world/file" -> normalised text
        self.word_texts: list[str] = []      # every doc as bare words, for the copy check
        self.questions: list[dict] = []

    def problem(self, msg: str) -> None:
        self.problems.append(msg)

    def where(self, needle: str, doc_ids) -> list[str]:
        n = normalise(needle)
        return [d for d in doc_ids if d in self.texts and n in self.texts[d]]

    # -- documents -------------------------------------------------------------------------
    def load_documents(self) -> None:
        for path in sorted(p for p in DOCS.rglob("*") if p.is_file()):
            rel = path.relative_to(DOCS).as_posix()
            if "/" not in rel:
                self.problem(f"docs: {rel} sits outside a world folder")
                continue
            if path.suffix not in DOC_SUFFIXES:
                self.problem(f"docs: {rel} has an unexpected file type")
                continue
            try:
                self.texts[rel] = normalise(document_text(path))
            except (subprocess.CalledProcessError, UnicodeDecodeError) as exc:
                self.problem(f"docs: cannot read {rel}: {exc}")
                continue
            if not self.texts[rel]:
                self.problem(f"docs: {rel} gives no text")
            words = len(self.texts[rel].split())
            if not WORDS_MIN <= words <= WORDS_MAX:
                self.problem(f"docs: {rel} has {words} words, expected {WORDS_MIN}-{WORDS_MAX}")
        worlds = {rel.split("/")[0] for rel in self.texts}
        if worlds != set(WORLD_PREFIX):
            self.problem(f"docs: world folders {sorted(worlds)}, expected {sorted(WORLD_PREFIX)}")
        for pdf in DOCS.rglob("*.pdf"):
            source = SRC / (pdf.stem + ".html")
            if not source.exists():
                self.problem(f"docs: {pdf.name} has no source {source.relative_to(ROOT)}")
            elif source.stat().st_mtime > pdf.stat().st_mtime + 1:
                self.problem(f"docs: {pdf.name} is older than its source; run sh src/build_pdfs.sh")
            if (pdf.parent / (pdf.stem + ".html")).exists():
                self.problem(f"docs: the source of {pdf.name} must live in src/, not docs/")
        for page in DOCS.rglob("*.html"):
            raw = page.read_text(encoding="utf-8")
            if not re.search(r"</table>\s*<p[ >]", raw):
                self.problem(f"docs: {page.name} should have a paragraph right after a table")
        size = sum(p.stat().st_size for p in ROOT.rglob("*") if p.is_file())
        if size >= SIZE_LIMIT:
            self.problem(f"set is {size} bytes, limit {SIZE_LIMIT}")

    # -- questions -------------------------------------------------------------------------
    def load_questions(self) -> None:
        for n, line in enumerate(QUESTIONS.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    self.questions.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    self.problem(f"questions.jsonl:{n}: not JSON ({exc})")

    def check_question(self, q: dict) -> None:
        qid = q.get("id", "?")
        keys = set(q)
        wanted = BASE_KEYS | ({"absent_terms"} if q.get("type") == "unanswerable" else set())
        if keys != wanted:
            self.problem(f"{qid}: fields {sorted(keys)} differ from {sorted(wanted)}")
            return
        for key in ("id", "question", "answer", "type", "world"):
            if not isinstance(q[key], str) or not q[key].strip():
                self.problem(f"{qid}: {key} must be a non-empty string")
                return
        for key in ("answer_aliases", "gold_doc_ids", "evidence", "distractors"):
            if not isinstance(q[key], list) or not all(isinstance(x, str) and x.strip() for x in q[key]):
                self.problem(f"{qid}: {key} must be a list of non-empty strings")
                return
        kind, world, answer, gold = q["type"], q["world"], q["answer"], q["gold_doc_ids"]
        if kind not in EXPECTED_TYPES:
            self.problem(f"{qid}: unknown type {kind}")
        if world not in WORLD_PREFIX or not re.fullmatch(WORLD_PREFIX.get(world, "?") + r"-\d\d", qid):
            self.problem(f"{qid}: id does not match world {world}")
        accepted = [normalise(answer)] + [normalise(a) for a in q["answer_aliases"]]
        if len(set(accepted)) != len(accepted):
            self.problem(f"{qid}: an alias repeats the answer or another alias")
        for doc in gold:
            if doc not in self.texts:
                self.problem(f"{qid}: gold doc {doc} does not exist")
            elif not doc.startswith(world + "/"):
                self.problem(f"{qid}: gold doc {doc} belongs to another world")
        self.check_not_copied(qid, q["question"])

        if kind == "unanswerable":
            if normalise(answer) != "not found" or gold or q["answer_aliases"] or q["evidence"]:
                self.problem(f"{qid}: unanswerable needs answer 'not found' and empty aliases/gold/evidence")
            if not q["absent_terms"]:
                self.problem(f"{qid}: unanswerable needs absent_terms")
            for term in q["absent_terms"] + ["not found"]:
                hits = self.where(term, self.texts)
                if hits:
                    self.problem(f"{qid}: absent term {term!r} occurs in {hits}")
            return

        if not gold or not q["evidence"]:
            self.problem(f"{qid}: answerable question needs gold docs and evidence")
            return
        if kind == "yes_no":
            if normalise(answer) not in ("yes", "no"):
                self.problem(f"{qid}: yes_no answer must be yes or no")
        elif not self.where(answer, gold):
            self.problem(f"{qid}: answer {answer!r} is not in {gold}")
        backed = set()
        for snippet in q["evidence"]:
            hits = self.where(snippet, gold)
            if not hits:
                self.problem(f"{qid}: evidence {snippet!r} is not in {gold}")
            backed.update(hits)
        if kind == "two-hop" and (len(gold) < 2 or len(backed) < 2):
            self.problem(f"{qid}: two-hop evidence must come from two gold docs (got {sorted(backed)})")
        for wrong in q["distractors"]:
            if normalise(wrong) in accepted:
                self.problem(f"{qid}: distractor {wrong!r} is also an accepted answer")
            elif kind != "yes_no" and not self.where(wrong, self.texts):
                self.problem(f"{qid}: distractor {wrong!r} occurs in no document")

    def check_not_copied(self, qid: str, question: str) -> None:
        if not self.word_texts:
            self.word_texts = [" " + " ".join(bare_words(t)) + " " for t in self.texts.values()]
        words = bare_words(question)
        for i in range(len(words) - COPY_WINDOW + 1):
            window = " ".join(words[i:i + COPY_WINDOW])
            if any(f" {window} " in t for t in self.word_texts):
                self.problem(f"{qid}: question copies document text: {window!r}")
                return

    def check_totals(self) -> None:
        ids = [q.get("id") for q in self.questions]
        for dup in sorted(i for i, n in Counter(ids).items() if n > 1):
            self.problem(f"duplicate id {dup}")
        types = Counter(q.get("type") for q in self.questions)
        if dict(types) != EXPECTED_TYPES:
            self.problem(f"type counts {dict(types)} differ from {EXPECTED_TYPES}")
        for world, wanted in EXPECTED_BY_WORLD.items():
            got = Counter(q.get("type") for q in self.questions if q.get("world") == world)
            if dict(got) != wanted:
                self.problem(f"{world}: type counts {dict(got)} differ from {wanted}")
        used = {d for q in self.questions for d in q.get("gold_doc_ids", [])}
        for doc in sorted(set(self.texts) - used):
            self.problem(f"{doc} is not a gold doc of any question")

    def check_independent(self) -> None:
        """No world, document name, question or id shared with the other userdocs sets."""
        siblings = []
        for base in [ROOT.parent, *[p / "shared" / "data" for p in ROOT.parents]]:
            if base.is_dir():
                siblings += [d for d in sorted(base.glob("userdocs*"))
                             if d.is_dir() and (d / "questions.jsonl").exists()
                             and d.resolve() != ROOT and d.name != ROOT.name]
        if not siblings:
            print("independence: no sibling set found, skipped")
            return
        everything = " ".join(self.texts.values())
        for person in PEOPLE:
            if normalise(person) not in everything:
                self.problem(f"PEOPLE lists {person!r}, who is in no document")
        mine_docs = {p.name for p in DOCS.rglob("*") if p.is_file()}
        mine_q = {normalise(q.get("question", "")) for q in self.questions}
        mine_ids = {q.get("id") for q in self.questions}
        for sib in siblings:
            worlds = {p.name for p in (sib / "docs").iterdir() if p.is_dir()} if (sib / "docs").is_dir() else set()
            for w in sorted(worlds & set(WORLD_PREFIX)):
                self.problem(f"independence: world {w} also in {sib}")
            names = {p.name for p in (sib / "docs").rglob("*") if p.is_file()} if (sib / "docs").is_dir() else set()
            sib_text = ""
            for path in sorted((sib / "docs").rglob("*")) if (sib / "docs").is_dir() else []:
                if path.is_file() and path.suffix in DOC_SUFFIXES:
                    with contextlib.suppress(subprocess.CalledProcessError, UnicodeDecodeError):
                        sib_text += " " + normalise(document_text(path))
            for person in PEOPLE:
                if normalise(person) in sib_text:
                    self.problem(f"independence: person {person} also in {sib}")
            for n in sorted(names & mine_docs):
                self.problem(f"independence: document name {n} also in {sib}")
            for line in (sib / "questions.jsonl").read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                try:
                    other = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if normalise(other.get("question", "")) in mine_q:
                    self.problem(f"independence: question {other.get('question')!r} also in {sib}")
                if other.get("id") in mine_ids:
                    self.problem(f"independence: id {other.get('id')} also in {sib}")
        print("independence: compared with " + ", ".join(str(s) for s in siblings))

    def run(self) -> int:
        self.load_documents()
        self.load_questions()
        for q in self.questions:
            self.check_question(q)
        self.check_totals()
        self.check_independent()
        self.report()
        return 1 if self.problems else 0

    def report(self) -> None:
        print(f"documents: {len(self.texts)}")
        for world in sorted(WORLD_PREFIX):
            names = sorted(d.split("/", 1)[1] for d in self.texts if d.startswith(world + "/"))
            print(f"  {world}: {', '.join(names)}")
        types = Counter(q.get("type") for q in self.questions)
        print(f"questions: {len(self.questions)}")
        print("  by type: " + ", ".join(f"{t} {types.get(t, 0)}" for t in EXPECTED_TYPES))
        worlds = Counter(q.get("world") for q in self.questions)
        print("  by world: " + ", ".join(f"{w} {worlds[w]}" for w in sorted(worlds)))
        by_world_type = Counter((q.get("world"), q.get("type")) for q in self.questions)
        for world in sorted(worlds):
            print(f"  {world}: " + ", ".join(f"{t} {by_world_type[(world, t)]}"
                                          for t in EXPECTED_TYPES if by_world_type[(world, t)]))
        suffixes = Counter(Path(d).suffix for q in self.questions for d in q.get("gold_doc_ids", []))
        print("  gold citations by file type: " + ", ".join(f"{s} {n}" for s, n in sorted(suffixes.items())))
        size = sum(p.stat().st_size for p in ROOT.rglob("*") if p.is_file())
        print(f"size: {size} bytes")
        if self.problems:
            print(f"FAILED: {len(self.problems)} problem(s)")
            for msg in self.problems:
                print("  - " + msg)
        else:
            print("OK: all checks passed")


def main() -> int:
    if shutil.which("pdftotext") is None:
        print("cannot run: pdftotext is missing (apt-get install poppler-utils)")
        return 2
    return Checker().run()


if __name__ == "__main__":
    sys.exit(main())
