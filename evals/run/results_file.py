"""results.jsonl: one `QuestionResult` a line, appended as each question finishes.

Appends are flushed and fsynced, so a killed eval loses at most the line being written; on
reading, a torn last line is cut off and that question simply runs again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from deepresearch.evals.run.results import QuestionResult
from pydantic import ValidationError

RESULTS_FILE = "results.jsonl"


class ResultsFile:
    def __init__(self, out_dir: Path):
        self.path = Path(out_dir) / RESULTS_FILE

    def load(self, *, drop_errors: bool = False) -> list[QuestionResult]:
        """All complete results; repairs a torn tail; keeps the last result per (system, question).

        With `drop_errors`, results that ended in an error are removed from the file so they run again.
        """
        if not self.path.is_file():
            return []
        raw = self.path.read_bytes()
        good_end = raw.rfind(b"\n") + 1
        if good_end < len(raw):  # killed mid-write: drop the partial line
            with self.path.open("r+b") as fh:
                fh.truncate(good_end)
        by_key: dict[tuple[str, str], QuestionResult] = {}
        for lineno, line in enumerate(raw[:good_end].decode("utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                result = QuestionResult.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError) as exc:
                raise ValueError(f"{self.path}:{lineno}: not a result line ({type(exc).__name__})") from None
            by_key[result.key] = result
        results = list(by_key.values())
        if drop_errors and any(r.output.error for r in results):
            results = [r for r in results if not r.output.error]
            self._rewrite(results)
        return results

    def rescore(self) -> int:
        """Score every result again from its output with today's metrics (an eval written before a metric existed
        reports it); returns how many results there are."""
        from deepresearch.evals.run.results import rescored

        results = [rescored(r) for r in self.load()]
        self._rewrite(results)
        return len(results)

    def append(self, result: QuestionResult) -> None:
        line = result.model_dump_json() + "\n"
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    def _rewrite(self, results: list[QuestionResult]) -> None:
        tmp = self.path.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(r.model_dump_json() + "\n" for r in results), encoding="utf-8")
        os.replace(tmp, self.path)
