"""`deepresearch build ranker|demo`: rebuild what ships in the source tree from the maintainers' QA pool beside
the repository. The answer ranker's feature weights are pasted into the code; the demo QA set is package data.
(The starter adapter is built with `train choices` and `adapters soup|compress`: its metadata.json says how.)"""

from __future__ import annotations

from pathlib import Path

import typer
from deepresearch.app.console import fail, say

from .qa_pool import pool_or_fail

POOL_HELP = "the QA pool: a folder with questions.jsonl and corpus.jsonl (default: ../shared/data/pool beside " \
            "the repository)"

build_app = typer.Typer(
    help="Rebuild what ships in the source tree from the QA pool (for maintainers): the answer ranker's weights, "
         "the demo QA set.",
    no_args_is_help=True,
    epilog="""Examples:
  deepresearch build ranker                  (fit on the pool's train questions; paste W into candidates.py)
  deepresearch build demo                    (grow deepresearch/demo/ with more pool questions)
The starter adapter: `deepresearch train choices` three times (--bridges --held-out 200 --train-seed 0, 1, 2),
then `deepresearch adapters soup` and `adapters compress --rank 32 --dtype bf16` (its metadata.json "built_by").""",
)


@build_app.command("ranker", epilog="""Examples:
  deepresearch build ranker
  deepresearch build ranker --pool ../shared/data/pool --limit 800 --embed
Prints the cross-validated top-1 / top-5 of the current and the fitted weights, then W to paste into
agent/graph/candidates.py. The pool's dev split is never read.""")
def ranker(
    pool: Path | None = typer.Option(None, "--pool", help=POOL_HELP),
    limit: int = typer.Option(800, "--limit", help="free-form train questions read (seed 0's order)"),
    embed: bool = typer.Option(False, "--embed", help="add the MiniLM question-sentence similarity as a feature"),
) -> None:
    """Fit the answer ranker's feature weights on the pool's train questions; print them with their top-1."""
    from deepresearch.app.runtime import quiet_libraries
    from deepresearch.train.choice.ranker import RankerDataError, fit_report

    folder = pool_or_fail(pool)
    if limit < 2:
        raise fail(f"--limit must be at least 2: the fit is cross-validated over two halves (got {limit})")
    quiet_libraries()
    try:
        fit_report(folder, limit, embed, say)
    except RankerDataError as exc:
        raise fail(str(exc)) from None


@build_app.command("demo", epilog="""Examples:
  deepresearch build demo
  deepresearch build demo --train 40 --dev 20 --demo /tmp/demo
It grows the demo in place: the shipped one is the original 60 questions and 600 paragraphs grown once with the
defaults. Dev questions never include the pool's reference eval set (the first 100 of the seed-0 order).""")
def demo(
    pool: Path | None = typer.Option(None, "--pool", help=POOL_HELP),
    train: int = typer.Option(160, "--train", help="train questions to add"),
    dev: int = typer.Option(80, "--dev", help="dev questions to add"),
    demo_dir: Path | None = typer.Option(None, "--demo", help="the demo folder to grow (questions.jsonl, "
                                         "corpus.jsonl; default: the package's deepresearch/demo/)"),
) -> None:
    """Grow the bundled demo QA set with pool questions of every type and their gold paragraphs."""
    from deepresearch.evals.data.dataset import bundled_dataset
    from deepresearch.evals.data.demo_dataset import DemoTooLarge, grow_demo

    folder = pool_or_fail(pool)
    target = demo_dir if demo_dir is not None else bundled_dataset("demo")[0].parent
    for name in ("questions.jsonl", "corpus.jsonl"):
        if not (target / name).is_file():
            raise fail(f"--demo: no {name} in {target}")
    if train < 0 or dev < 0:
        raise fail(f"--train and --dev must be at least 0 (got {train}, {dev})")
    try:
        say(grow_demo(folder, target, train, dev))
    except DemoTooLarge as exc:
        raise fail(str(exc)) from None


def register(app: typer.Typer) -> None:
    app.add_typer(build_app, name="build")
