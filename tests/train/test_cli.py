"""`deepresearch train` and `deepresearch adapters` bad inputs: one clear line on stderr, exit 2, no model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from .test_registry import fake_adapter_dir


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DEEPRESEARCH_DATA_DIR", str(tmp_path / "data"))
    from deepresearch.app import settings as app_settings

    monkeypatch.setattr(app_settings, "_current", None)
    return tmp_path / "data"


@pytest.fixture
def cli(data_dir: Path):
    from deepresearch.app.commands import adapters, train

    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        pass

    train.register(app)
    adapters.register(app)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(map(str, args)))


@pytest.fixture
def qfile(tmp_path: Path) -> Path:
    path = tmp_path / "q.jsonl"
    rows = [{"id": "a", "question": "Who?", "answer": "Ada", "split": "train"},
            {"id": "b", "question": "When?", "answer": "1815", "split": "dev"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def one_line_error(result, pattern: str) -> None:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and pattern in lines[0], lines[0]


def test_question_source_is_required_and_exclusive(cli, qfile):
    one_line_error(cli("train"), "exactly one question source")
    one_line_error(cli("train", "--questions", qfile, "--from-runs"), "exactly one question source")
    one_line_error(cli("train", "--questions", qfile, "--watch"), "--watch trains on new logged runs")


def test_dataset_names_a_bundled_set(cli, qfile):
    one_line_error(cli("train", "--dataset", "nope"), "no bundled dataset 'nope' (bundled: demo)")
    one_line_error(cli("train", "--dataset", "demo", "--questions", qfile), "drop --questions/--corpus")
    # A bundled set is a question source like --questions: not together with --from-runs.
    one_line_error(cli("train", "--dataset", "demo", "--from-runs"), "exactly one question source")


def test_bad_numbers(cli, qfile):
    base = ["train", "--questions", qfile, "--no-gate"]
    one_line_error(cli(*base, "--group-size", "1"), "--group-size must be at least 2")
    one_line_error(cli(*base, "--rounds", "0"), "--rounds must be at least 1")
    one_line_error(cli(*base, "--questions-per-round", "0"), "--questions-per-round must be at least 1")
    one_line_error(cli(*base, "--temperature", "0"), "--temperature must be above 0")
    one_line_error(cli(*base, "--num-processes", "0"), "--num-processes must be at least 1")
    one_line_error(cli(*base, "--launcher", "slurm"), "--launcher must be inprocess or accelerate")
    one_line_error(cli(*base, "--train-roles", "planner,pilot"), "--train-roles: unknown role pilot; the roles are:")
    one_line_error(cli(*base, "--train-roles", ","), "--train-roles: unknown role (none given)")


def test_train_roles_set_the_role_weights(capsys):
    import typer
    from deepresearch.app.commands.train_inputs import apply_overrides
    from deepresearch.train.config import GRPOSettings, TrainSettings, trainable_roles

    def overrides(roles: str | None, cfg: TrainSettings | None = None) -> TrainSettings:
        return apply_overrides(cfg or TrainSettings(), group_size=None, temperature=None, per_round=None,
                               launcher=None, accelerate_config=None, num_processes=None, train_roles=roles)

    cfg = overrides("planner, writer")
    assert cfg.rewards.role_weights == {role: float(role in ("planner", "writer")) for role in trainable_roles()}
    assert cfg.rewards.trained_roles() == {"planner", "writer"} and not cfg.trains_answer_choice()
    unchanged = overrides(None)
    assert unchanged.rewards.role_weights == {} and unchanged.rewards.trained_roles() is None
    assert unchanged.trains_answer_choice()  # every role, the re-ranker's choice among them
    # The re-ranker's choice alone: no token samples are trained, only its choice loss.
    only_choice = overrides("answer")
    assert only_choice.rewards.trained_roles() == {"answer"} and only_choice.trains_answer_choice()
    with pytest.raises(typer.Exit):
        overrides("answer", TrainSettings(grpo=GRPOSettings(answer_choice_lr=0.0)))
    assert "the choice loss is off" in capsys.readouterr().err
    # The hop's bridge alone: its own choice loss, not the re-ranker's.
    only_bridge = overrides("bridge")
    assert only_bridge.trains_bridge_choice() and not only_bridge.trains_answer_choice()
    assert unchanged.trains_bridge_choice() and not cfg.trains_bridge_choice()
    with pytest.raises(typer.Exit):
        overrides("answer,bridge", TrainSettings(grpo=GRPOSettings(answer_choice_lr=0.0)))
    assert "--train-roles answer,bridge: the choice loss is off" in capsys.readouterr().err


def test_bad_files_and_places(cli, qfile, tmp_path):
    one_line_error(cli("train", "--questions", tmp_path / "nope.jsonl"), "--questions: no such file")
    one_line_error(cli("train", "--questions", qfile, "--corpus", tmp_path / "c.jsonl"), "--corpus: no such file")
    one_line_error(cli("train", "--questions", qfile, "--corpus", qfile, "--index", "x"), "not both")
    one_line_error(cli("train", "--questions", qfile, "--index", "pool"), "the eval gate evaluates on a corpus")
    one_line_error(cli("train", "--questions", qfile, "--no-gate", "--index", "pool"), "no index named 'pool'")
    one_line_error(cli("train", "--questions", qfile, "--no-gate", "--launcher", "accelerate",
                       "--accelerate-config", tmp_path / "x.yaml"), "accelerate config not found")
    one_line_error(cli("train", "--from-runs", "--since", "yesterday", "--no-gate"), "--since")
    one_line_error(cli("train", "--questions", qfile, "--no-gate", "--export-samples", qfile), "is a file")


def test_bad_question_file_content(cli, qfile, tmp_path, data_dir):
    from deepresearch.tools.index.store import DB_FILE

    (data_dir / "indexes" / "mine").mkdir(parents=True)
    (data_dir / "indexes" / "mine" / DB_FILE).write_text("")  # exists() is all the CLI checks up front
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "question": "q"}\n')
    one_line_error(cli("train", "--questions", bad, "--no-gate", "--index", "mine"), "bad.jsonl:1")
    one_line_error(cli("train", "--questions", qfile, "--no-gate", "--index", "mine", "--split", "test"),
                   "no questions in split 'test'")


def test_bad_resume_and_hours(cli, qfile, data_dir):
    from deepresearch.tools.index.store import DB_FILE
    from deepresearch.train.rounds.checkpoint import Checkpoint, LoopState

    (data_dir / "indexes" / "mine").mkdir(parents=True)
    (data_dir / "indexes" / "mine" / DB_FILE).write_text("")
    args = ("train", "--questions", qfile, "--no-gate", "--index", "mine")
    one_line_error(cli(*args, "--hours", "0"), "--hours must be above 0")
    one_line_error(cli(*args, "--resume"), "--resume: no trainer checkpoint at")
    Checkpoint(data_dir / "train" / "checkpoint").commit(LoopState(stream="another question set", rounds_done=1))
    one_line_error(cli(*args, "--resume"), "trained on other questions or settings")
    (data_dir / "train" / "checkpoint" / "loop.json").write_text("{")
    one_line_error(cli(*args, "--resume"), "unreadable")
    assert (data_dir / "train" / "checkpoint" / "loop.json").read_text() == "{"  # nothing touched


def test_resume_with_every_round_done_says_so_without_loading_a_model(cli, qfile, data_dir):
    from deepresearch.tools.index.store import DB_FILE
    from deepresearch.train.config import TrainSettings
    from deepresearch.train.rounds.checkpoint import Checkpoint, LoopState, question_stream

    (data_dir / "indexes" / "mine").mkdir(parents=True)
    (data_dir / "indexes" / "mine" / DB_FILE).write_text("")
    cfg = TrainSettings()
    stream = question_stream(["a"], cfg.grpo.seed, cfg.rollout.questions_per_round, cfg.grpo.num_generations)
    Checkpoint(data_dir / "train" / "checkpoint").commit(LoopState(stream=stream, rounds_done=2))
    result = cli("train", "--questions", qfile, "--no-gate", "--index", "mine", "--rounds", "2", "--resume")
    assert result.exit_code == 0, result.output
    assert "nothing to do: the checkpoint has 2 round(s) done (--rounds 2)" in result.stdout


def test_from_runs_with_nothing_logged(cli, data_dir):
    from deepresearch.tools.index.store import DB_FILE

    (data_dir / "indexes" / "mine").mkdir(parents=True)
    (data_dir / "indexes" / "mine" / DB_FILE).write_text("")
    one_line_error(cli("train", "--from-runs", "--no-gate", "--index", "mine"), "no logged questions to train on")


def test_from_runs_gates_on_the_bundled_demo_dev_set_when_none_is_given(cli, data_dir):
    from deepresearch.app.commands.train_inputs import demo_dev_note
    from deepresearch.app.runtime import demo_file
    from deepresearch.evals.data.dataset import load_questions

    dev_questions = sum(q.split == "dev" for q in load_questions(demo_file("questions.jsonl")))
    result = cli("train", "--from-runs", "--rounds", "1")  # the README's compose command, on an empty trace store
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    # the note names what the gate really evaluates: train.publish.dev_size (16) of the demo's dev split
    assert lines[0] == demo_dev_note(16, dev_questions) and "needs a dev set" not in result.stderr
    assert "16 of its 100 dev questions" in lines[0]
    assert lines[-1].startswith("error: no logged questions to train on")
    sized = cli("train", "--from-runs", "--dev-size", "5")
    assert sized.stderr.splitlines()[0] == demo_dev_note(5, dev_questions)


def test_a_dev_set_of_ones_own_with_from_runs_names_its_corpus_apart(cli, data_dir, qfile, tmp_path):
    """--corpus would also make the replays search that corpus; --dev-corpus is the gate's alone."""
    one_line_error(cli("train", "--from-runs", "--dev", qfile), "give --dev-corpus FILE")
    one_line_error(cli("train", "--from-runs", "--dev", qfile, "--dev-corpus", tmp_path / "none.jsonl"),
                   "--dev-corpus: no such file")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "d1", "title": "Ada", "text": "Ada Lovelace."}) + "\n")
    result = cli("train", "--from-runs", "--dev", qfile, "--dev-corpus", corpus)
    one_line_error(result, "no logged questions to train on")  # the gate was set up; the store is empty


def test_from_runs_on_a_server_replays_where_runs_searched_and_asks_the_server_for_its_weights(
    cli, data_dir, monkeypatch
):
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.tools.config import ToolSettings
    from deepresearch.tools.index.documents import SourceDoc
    from deepresearch.tools.index.registry import IndexRegistry

    registry = IndexRegistry(ToolSettings(data_dir=data_dir))
    registry.open("mine", create=True).add([SourceDoc(id="n1", title="Notes", text="Notes on looms.")], source="t")
    registry.close()
    store = TraceStore(data_dir / "traces.db")
    snapshot = {"tools": {"search": {"backends": ["searxng", "ddg", "local"], "searxng_url": "http://searxng:8080"}},
                "run": {"offline": False, "index": "mine"}}
    store.finish_run(store.start_run("Who designed the loom?", snapshot), "finished", "Jacquard", "r", [], {})
    store.close()
    monkeypatch.setenv("DEEPRESEARCH_MODEL__BACKEND", "openai")
    monkeypatch.setenv("DEEPRESEARCH_MODEL__BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens
    monkeypatch.delenv("MODEL", raising=False)
    result = cli("train", "--from-runs", "--no-gate")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[0] == ("rollouts of 1 question(s) as their runs did: searxng (http://searxng:8080) → ddg → "
                        "local (mine)")
    assert lines[-1].startswith("error: training against a model server needs the served model's weights")
    assert "names no base model" in lines[-1] and "$MODEL is not set" in lines[-1]


def test_adapters_list_use_rollback(cli, data_dir):
    result = cli("adapters", "list")
    assert result.exit_code == 0 and "no adapters yet" in result.stdout
    one_line_error(cli("adapters", "use", "grpo-0001"), "no adapter named 'grpo-0001'")
    one_line_error(cli("adapters", "rollback"), "nothing to roll back")
    fake_adapter_dir(data_dir / "adapters", "grpo-0001", "2025-01-01")
    fake_adapter_dir(data_dir / "adapters", "grpo-0002", "2025-01-02")
    assert cli("adapters", "use", "grpo-0001").stdout.strip() == "serving grpo-0001"
    assert cli("adapters", "use", "grpo-0002").exit_code == 0
    lines = cli("adapters", "list").stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith("  grpo-0001") and lines[1].startswith("* grpo-0002")
    assert "reward 0.500" in lines[1]
    assert cli("adapters", "rollback").stdout.strip() == "rolled back: serving grpo-0001"
    assert cli("adapters", "use", "base").stdout.strip() == "serving the base model"
    one_line_error(cli("adapters", "use", "../x"), "no adapter named '../x'")


def test_round_line_says_how_many_samples_were_trained():
    from deepresearch.train.rounds.loop import RoundReport
    from deepresearch.train.update.updater import UpdateStats

    stats = UpdateStats(optimizer_steps=1, samples=2, processed_tokens=600, seconds=6.0)
    scoped = RoundReport(round=1, rollout_runs=2, samples=18, update=stats, adapter="grpo-0001", published=True)
    assert "2 of 18 samples (roles trained), update 6 s (100 tok/s)" in scoped.line()
    every_role = scoped.model_copy(update={"samples": 2})
    assert "· 2 samples, update 6 s" in every_role.line()
    assert "GPU" not in every_role.line()  # CPU updates have no GPU peak to report
    on_gpu = every_role.model_copy(update={"update": stats.model_copy(update={"peak_gpu_gib": 27.94})})
    assert "loss +0.0000, peak GPU 27.9 GiB" in on_gpu.line()


def test_a_missing_base_model_is_one_line_and_the_trace_store_is_closed(cli, qfile, data_dir, tmp_path, monkeypatch):
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.tools.index.store import DB_FILE

    closed = []
    real_close = TraceStore.close
    monkeypatch.setattr(TraceStore, "close", lambda self: (closed.append(True), real_close(self))[1])
    monkeypatch.setenv("DEEPRESEARCH_TRAIN__BASE_MODEL", str(tmp_path / "nowhere"))
    (data_dir / "indexes" / "mine").mkdir(parents=True)
    (data_dir / "indexes" / "mine" / DB_FILE).write_text("")
    result = cli("train", "--questions", qfile, "--no-gate", "--index", "mine")
    one_line_error(result, "train.base_model: no such directory")
    assert closed == [True]  # the early exit still closes what it opened
