#!/usr/bin/env python3
"""Validator for a userdocs set: do the questions in questions.jsonl hold against the files in docs/?

Needs only the standard library and the `pdftotext` command (poppler-utils).
Usage: python3 dev/sets/check_set.py SET_DIR     (each set's own check.py runs this on its folder)
Exit 0 = pass, 1 = problems found, 2 = cannot run.

What differs between sets is read from SET_DIR/check.json:
  "worlds": {world folder: {"id_prefix": "let",           ids are <prefix>-NN
                            "types": {type: count, ...},  questions of each type in that world
                            "people": [full name, ...]}}  optional: everyone named in that world's
                                                          documents; none may appear in a sibling set
  "words_per_document": [min, max]                        optional: words per document (HTML: visible text)
The expected totals by type are the sums over the worlds. Siblings (for the independence check) are the
other sets found automatically: ../userdocs* beside SET_DIR and shared/data/userdocs* above it.

Text matching: casefold, then every run of whitespace (newlines, tabs, no-break spaces) becomes
one space. HTML is turned into text first (markup dropped, entities decoded, a line break
around every cell and block element). A scorer should use the same rule.
"""
from __future__ import annotations

import argparse
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

CONFIG_NAME = "check.json"
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


class SetConfig:
    """The per-set settings of check.json (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        data = json.loads(path.read_text(encoding="utf-8"))
        worlds = data["worlds"]
        self.world_prefix: dict[str, str] = {w: spec["id_prefix"] for w, spec in worlds.items()}
        self.by_world: dict[str, dict[str, int]] = {w: dict(spec["types"]) for w, spec in worlds.items()}
        self.types: dict[str, int] = {}       # expected totals, in the order the worlds list the types
        for counts in self.by_world.values():
            for kind, n in counts.items():
                self.types[kind] = self.types.get(kind, 0) + n
        self.people: tuple[str, ...] = tuple(p for spec in worlds.values() for p in spec.get("people", []))
        words = data.get("words_per_document")
        self.words: tuple[int, int] | None = (int(words[0]), int(words[1])) if words else None


class Checker:
    def __init__(self, root: Path, config: SetConfig) -> None:
        self.root = root
        self.docs = root / "docs"
        self.src = root / "src"
        self.cfg = config
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
        words_range = self.cfg.words
        for path in sorted(p for p in self.docs.rglob("*") if p.is_file()):
            rel = path.relative_to(self.docs).as_posix()
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
            if words_range and not words_range[0] <= words <= words_range[1]:
                self.problem(f"docs: {rel} has {words} words, expected {words_range[0]}-{words_range[1]}")
        worlds = {rel.split("/")[0] for rel in self.texts}
        if worlds != set(self.cfg.world_prefix):
            self.problem(f"docs: world folders {sorted(worlds)}, expected {sorted(self.cfg.world_prefix)}")
        for pdf in self.docs.rglob("*.pdf"):
            source = self.src / (pdf.stem + ".html")
            if not source.exists():
                self.problem(f"docs: {pdf.name} has no source {source.relative_to(self.root)}")
            elif source.stat().st_mtime > pdf.stat().st_mtime + 1:
                self.problem(f"docs: {pdf.name} is older than its source; run sh src/build_pdfs.sh")
            if (pdf.parent / (pdf.stem + ".html")).exists():
                self.problem(f"docs: the source of {pdf.name} must live in src/, not docs/")
        for page in self.docs.rglob("*.html"):
            raw = page.read_text(encoding="utf-8")
            if not re.search(r"</table>\s*<p[ >]", raw):
                self.problem(f"docs: {page.name} should have a paragraph right after a table")
        size = self.size()
        if size >= SIZE_LIMIT:
            self.problem(f"set is {size} bytes, limit {SIZE_LIMIT}")

    def size(self) -> int:
        return sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file())

    # -- questions -------------------------------------------------------------------------
    def load_questions(self) -> None:
        lines = (self.root / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines, 1):
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
        prefixes = self.cfg.world_prefix
        if kind not in self.cfg.types:
            self.problem(f"{qid}: unknown type {kind}")
        if world not in prefixes or not re.fullmatch(prefixes.get(world, "?") + r"-\d\d", qid):
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
        if dict(types) != self.cfg.types:
            self.problem(f"type counts {dict(types)} differ from {self.cfg.types}")
        for world, wanted in self.cfg.by_world.items():
            got = Counter(q.get("type") for q in self.questions if q.get("world") == world)
            if dict(got) != wanted:
                self.problem(f"{world}: type counts {dict(got)} differ from {wanted}")
        used = {d for q in self.questions for d in q.get("gold_doc_ids", [])}
        for doc in sorted(set(self.texts) - used):
            self.problem(f"{doc} is not a gold doc of any question")

    # -- independence ----------------------------------------------------------------------
    def siblings(self) -> list[Path]:
        """The other userdocs sets: beside this one, and in shared/data above it (not a copy of this one)."""
        found = []
        for base in [self.root.parent, *[p / "shared" / "data" for p in self.root.parents]]:
            if base.is_dir():
                found += [d for d in sorted(base.glob("userdocs*"))
                          if d.is_dir() and (d / "questions.jsonl").exists()
                          and d.resolve() != self.root and d.name != self.root.name]
        return found

    def check_independent(self) -> None:
        """No world, document name, person, question or id shared with the other userdocs sets."""
        siblings = self.siblings()
        if not siblings:
            print("independence: no sibling set found, skipped")
            return
        everything = " ".join(self.texts.values())
        for person in self.cfg.people:
            if normalise(person) not in everything:
                self.problem(f"{CONFIG_NAME}: people lists {person!r}, who is in no document")
        mine_docs = {p.name for p in self.docs.rglob("*") if p.is_file()}
        mine_q = {normalise(q.get("question", "")) for q in self.questions}
        mine_ids = {q.get("id") for q in self.questions}
        for sib in siblings:
            sib_docs = sib / "docs"
            worlds = {p.name for p in sib_docs.iterdir() if p.is_dir()} if sib_docs.is_dir() else set()
            for w in sorted(worlds & set(self.cfg.world_prefix)):
                self.problem(f"independence: world {w} also in {sib}")
            names = {p.name for p in sib_docs.rglob("*") if p.is_file()} if sib_docs.is_dir() else set()
            if self.cfg.people:
                sib_text = ""
                for path in sorted(sib_docs.rglob("*")) if sib_docs.is_dir() else []:
                    if path.is_file() and path.suffix in DOC_SUFFIXES:
                        with contextlib.suppress(subprocess.CalledProcessError, UnicodeDecodeError):
                            sib_text += " " + normalise(document_text(path))
                for person in self.cfg.people:
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

    # -- run -------------------------------------------------------------------------------
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
        for world in sorted(self.cfg.world_prefix):
            names = sorted(d.split("/", 1)[1] for d in self.texts if d.startswith(world + "/"))
            print(f"  {world}: {', '.join(names)}")
        types = Counter(q.get("type") for q in self.questions)
        print(f"questions: {len(self.questions)}")
        print("  by type: " + ", ".join(f"{t} {types.get(t, 0)}" for t in self.cfg.types))
        worlds = Counter(q.get("world") for q in self.questions)
        print("  by world: " + ", ".join(f"{w} {worlds[w]}" for w in sorted(worlds)))
        by_world_type = Counter((q.get("world"), q.get("type")) for q in self.questions)
        for world in sorted(worlds):
            print(f"  {world}: " + ", ".join(f"{t} {by_world_type[(world, t)]}"
                                          for t in self.cfg.types if by_world_type[(world, t)]))
        suffixes = Counter(Path(d).suffix for q in self.questions for d in q.get("gold_doc_ids", []))
        print("  gold citations by file type: " + ", ".join(f"{s} {n}" for s, n in sorted(suffixes.items())))
        print(f"size: {self.size()} bytes")
        skipped = []
        if not self.cfg.words:
            skipped.append("words per document (no words_per_document)")
        if not self.cfg.people:
            skipped.append("people (no people listed)")
        if skipped:
            print(f"not checked for this set ({CONFIG_NAME}): " + "; ".join(skipped))
        if self.problems:
            print(f"FAILED: {len(self.problems)} problem(s)")
            for msg in self.problems:
                print("  - " + msg)
        else:
            print("OK: all checks passed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Validate a userdocs question set against its documents.")
    parser.add_argument("set_dir", type=Path, help=f"the set's folder (holds docs/, questions.jsonl, {CONFIG_NAME})")
    args = parser.parse_args(argv)
    root = args.set_dir.resolve()
    if shutil.which("pdftotext") is None:
        print("cannot run: pdftotext is missing (apt-get install poppler-utils)")
        return 2
    try:
        config = SetConfig(root / CONFIG_NAME)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        print(f"cannot run: {root / CONFIG_NAME} is missing or malformed ({exc!r})")
        return 2
    if not (root / "questions.jsonl").is_file() or not (root / "docs").is_dir():
        print(f"cannot run: {root} has no questions.jsonl or no docs/")
        return 2
    return Checker(root, config).run()


if __name__ == "__main__":
    sys.exit(main())
