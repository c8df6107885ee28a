"""`deepresearch train starter` (train/choice/starter_recipe.py): bad input is one clear line and exit 2 before a
model loads; a real run on questions synthesized from a small folder (the 135M model, two parts) writes the
averaged, cut adapter with what built it, and a second run with the same --out resumes after the parts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..app.helpers import clean_env, cli, one_error_line
from .synth_docs import write_docs


def run(tmp_path: Path, *args: str, timeout: float = 120):
    return cli("train", "starter", "--out", str(tmp_path / "out"), *args, env=clean_env(tmp_path), timeout=timeout)


@pytest.mark.parametrize(("args", "error"), [
    ((), "error: give the documents (--corpus FILE|DIR or --index NAME) or a QA set (--questions Q --corpus C)"),
    (("--corpus", "a.jsonl", "--index", "notes"),
     "error: give the documents (--corpus FILE|DIR or --index NAME) or a QA set (--questions Q --corpus C)"),
    (("--questions", "qa.jsonl"), "error: --questions needs its --corpus (a jsonl), and no --index"),
    (("--corpus", "nowhere"), "error: no such file or folder: nowhere"),
    (("--corpus", ".", "--dtype", "fp16"), "error: --dtype must be fp32 or bf16 (got 'fp16')"),
    (("--corpus", ".", "--parts", "0"), "error: need --parts ≥ 1, --rank ≥ 1, --limit ≥ 2 and --total ≥ 4"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, args, error):
    done = run(tmp_path, *args)
    assert done.returncode == 2, done.stderr
    assert one_error_line(done) == error
    assert not (tmp_path / "out").exists()


def test_a_questions_file_that_is_not_jsonl_is_named(tmp_path):
    (tmp_path / "qa.jsonl").write_text("not json\n")
    (tmp_path / "c.jsonl").write_text("")
    done = run(tmp_path, "--questions", str(tmp_path / "qa.jsonl"), "--corpus", str(tmp_path / "c.jsonl"))
    assert done.returncode == 2 and one_error_line(done).startswith(f"error: {tmp_path / 'qa.jsonl'}: not a QA jsonl")


def test_held_out_must_leave_questions_to_train_on(tmp_path):
    docs = write_docs(tmp_path / "docs")
    done = run(tmp_path, "--corpus", str(docs), "--total", "24", "--held-out", "500")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    synthesized, error = done.stderr.strip().splitlines()  # what was made, then why it stops
    assert synthesized.startswith("synthesized from 8 documents")
    assert error.startswith("error: --held-out must be below the train questions read (")
    assert not (tmp_path / "out").exists()


def test_a_label_free_starter_from_a_folder_is_built_and_resumed(tmp_path):
    docs = write_docs(tmp_path / "docs")
    args = ("--corpus", str(docs), "--total", "24", "--parts", "2", "--held-out", "2", "--rank", "8")
    done = run(tmp_path, *args, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "out"
    meta = json.loads((out / "adapter" / "metadata.json").read_text())
    config = json.loads((out / "adapter" / "adapter_config.json").read_text())
    assert config["r"] == 8 and meta["rank"] == 8 and meta["dtype"] == "bf16"
    assert meta["roles"] == ["answer", "bridge"] and len(meta["parts"]) == 2
    assert meta["built_by"][0].startswith("deepresearch train starter --out ")
    assert meta["origin"].startswith("answer and bridge choices trained 2 times on ")
    assert "synthesized from" in meta["origin"] and "no gold answer read" in meta["origin"] and "from" not in meta
    assert all(p["held_out"] == 2 for p in meta["parts"])
    assert not (out / "soup").exists() and (out / "part-1" / "summary.json").is_file()
    first = (out / "adapter" / "adapter_model.safetensors").read_bytes()

    again = run(tmp_path, *args, timeout=900)  # the parts are there: averaged and cut again, not retrained
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.count("trained before") == 2 and "training (" not in again.stdout
    assert (out / "adapter" / "adapter_model.safetensors").read_bytes() == first

    other = run(tmp_path, *args[:3], "30", *args[4:])  # other questions: the parts there are not this recipe's
    assert other.returncode == 2 and "Traceback" not in other.stderr
    assert other.stderr.strip().splitlines()[-1] == (f"error: {out / 'part-0'} was trained with other questions or "
                                                     "settings: give another --out")
    assert (out / "adapter" / "adapter_model.safetensors").read_bytes() == first
