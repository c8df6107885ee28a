"""What `deepresearch train` checks and resolves before anything loads: flags, the dev set of the eval gate,
the questions file, the local index, the base model's weights. Each failure is one line and a non-zero exit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from deepresearch.app.console import err, fail

if TYPE_CHECKING:
    from deepresearch.app.settings import Settings
    from deepresearch.train.adapters.publish import DevSet
    from deepresearch.train.config import TrainSettings
    from deepresearch.train.rounds.questions import TrainQuestion


def demo_dev_note(size: int, dev_questions: int) -> str:
    return (f"eval gate: no dev set given (--dev or train.publish.dev_questions), so it uses the bundled demo dev "
            f"set: {size} of its {dev_questions} dev questions (HotpotQA and MuSiQue multi-hop; --dev-size sets "
            "how many) over the demo corpus (deepresearch/demo)")


def check_inputs(
    questions: Path | None, from_runs: bool, corpus: Path | None, dev: Path | None, group_size: int | None,
    rounds: int, per_round: int | None, temperature: float | None, launcher: str | None, num_processes: int | None,
    watch: bool, train_roles: str | None = None, dev_corpus: Path | None = None, index: str | None = None,
) -> None:
    if (questions is not None and from_runs) or (questions is None and not from_runs and corpus is None
                                                  and not index):
        raise fail("give exactly one question source: --questions FILE or --from-runs, or the documents to "
                   "synthesize questions from (--index NAME or --corpus FILE|DIR)")
    if watch and not from_runs:
        raise fail("--watch trains on new logged runs: use it with --from-runs")
    synth = questions is None and not from_runs  # questions synthesized from --corpus or --index (train/synth/)
    if corpus is not None and synth and not corpus.exists():
        raise fail(f"--corpus: no such file or folder: {corpus}")
    for flag, path in (("--questions", questions), ("--corpus", None if synth else corpus), ("--dev", dev),
                       ("--dev-corpus", dev_corpus)):
        if path is not None and not path.is_file():
            raise fail(f"{flag}: no such file: {path}")
    if group_size is not None and group_size < 2:
        raise fail(f"--group-size must be at least 2: GRPO compares runs of one question (got {group_size})")
    if rounds < 0 or (rounds == 0 and not watch):
        raise fail(f"--rounds must be at least 1 (0 = forever, only with --watch) (got {rounds})")
    if per_round is not None and per_round < 1:
        raise fail(f"--questions-per-round must be at least 1 (got {per_round})")
    if temperature is not None and not 0.0 < temperature <= 5.0:
        raise fail(f"--temperature must be above 0 (rollouts sample) and at most 5 (got {temperature})")
    if launcher is not None and launcher not in ("inprocess", "accelerate"):
        raise fail(f"--launcher must be inprocess or accelerate (got {launcher!r})")
    if num_processes is not None and num_processes < 1:
        raise fail(f"--num-processes must be at least 1 (got {num_processes})")
    if train_roles is not None:
        parse_roles(train_roles)


def parse_roles(text: str) -> list[str]:
    """`planner,writer` → the roles, each one of the agent's or `answer`; a clear error otherwise."""
    from deepresearch.train.config import trainable_roles

    roles = [r.strip() for r in text.split(",") if r.strip()]
    unknown = [r for r in roles if r not in trainable_roles()]
    if not roles or unknown:
        raise fail(f"--train-roles: unknown role {', '.join(unknown) or '(none given)'}; the roles are: "
                   f"{', '.join(trainable_roles())} (answer: the answer re-ranker's choice; "
                   "bridge: the follow-up hop's)")
    return roles


def apply_overrides(cfg: TrainSettings, **kw: Any) -> TrainSettings:
    grpo = {k: v for k, v in {"num_generations": kw["group_size"], "temperature": kw["temperature"]}.items()
            if v is not None}
    rollout = {k: v for k, v in {"questions_per_round": kw["per_round"]}.items() if v is not None}
    # weight 0 leaves a role out of the update; the adapter then answers only for the trained roles
    rewards = cfg.rewards.training_only(parse_roles(kw["train_roles"])) if kw.get("train_roles") else cfg.rewards
    launch = {k: v for k, v in {"launcher": kw["launcher"], "accelerate_config": kw["accelerate_config"],
                                "num_processes": kw["num_processes"]}.items() if v is not None}
    out = cfg.model_copy(update={
        "grpo": cfg.grpo.model_copy(update=grpo), "rollout": cfg.rollout.model_copy(update=rollout),
        "launch": cfg.launch.model_copy(update=launch), "rewards": rewards,
    })
    from deepresearch.agent.reader import ANSWER_ROLE, BRIDGE_ROLE

    trained = out.rewards.trained_roles()
    if trained is not None and trained <= {ANSWER_ROLE, BRIDGE_ROLE} and out.grpo.answer_choice_lr <= 0:
        raise fail(f"--train-roles {','.join(sorted(trained))}: the choice loss is off (train.grpo.answer_choice_lr "
                   "is 0), so nothing would train; set it above 0 or train another role")
    return out


def check_index(settings: Settings, name: str) -> None:
    from deepresearch.tools.index.registry import IndexRegistry

    registry = IndexRegistry(settings.tools)
    try:
        if not registry.exists(name):
            known = ", ".join(registry.names()) or "none yet"
            raise fail(f"--index: no index named {name!r} (indexes: {known}; or give --corpus FILE)")
    finally:
        registry.close()


def resolve_dev_set(
    cfg: TrainSettings, dev: Path | None, split: str | None, corpus: Path | None, size: int | None
) -> DevSet:
    from deepresearch.train.adapters.publish import DevSet

    p = cfg.publish
    if dev is None:  # nothing names one (--from-runs): the bundled demo set, with its own corpus
        from deepresearch.app.runtime import demo_file
        from deepresearch.evals.data.dataset import load_questions

        dev, corpus = demo_file("questions.jsonl"), demo_file("corpus.jsonl")
        in_split = sum(q.split == split for q in load_questions(dev)) if split else len(load_questions(dev))
        err.print(demo_dev_note(min(size or p.dev_size, in_split), in_split), markup=False, highlight=False)
    if corpus is None:
        raise fail("the eval gate evaluates on a corpus: give --dev-corpus FILE (or --corpus FILE, or --no-gate)")
    for what, path in (("dev set", dev), ("dev corpus", corpus)):
        if not Path(path).is_file():
            raise fail(f"eval gate {what}: no such file: {path}")
    return DevSet(questions=dev, corpus=corpus, split=split, limit=size or p.dev_size, seeds=p.eval_seeds,
                  metric=p.metric, tolerance=p.tolerance)


def load_questions(path: Path, split: str | None) -> list[TrainQuestion]:
    from deepresearch.evals.data.dataset import DatasetError
    from deepresearch.train.rounds.questions import questions_from_file

    try:
        items = questions_from_file(path, split=split)
    except DatasetError as exc:
        raise fail(str(exc)) from None
    if not items:
        raise fail(f"{path}: no questions" + (f" in split '{split}' (use --split '' for all)" if split else ""))
    return items


def base_model_dir(settings: Settings, cfg: TrainSettings) -> Path:
    if cfg.base_model is not None:
        if not cfg.base_model.is_dir():
            raise fail(f"train.base_model: no such directory: {cfg.base_model}")
        return cfg.base_model
    if settings.model.backend != "embedded":
        from deepresearch.train.base_model import BaseModelNotFound, resolve_base_model

        try:
            path, source = resolve_base_model(settings.model.base_url, settings.model.name,
                                              settings.model.api_key.get_secret_value())
        except BaseModelNotFound as exc:
            raise fail(f"training against a model server needs the served model's weights ({exc}): set "
                       "train.base_model (a Hugging Face model directory) or MODEL") from None
        err.print(f"base model: {source}")
        return path
    from deepresearch.agent.model.factory import embedded_model_dir

    return embedded_model_dir(settings.cache_dir)
