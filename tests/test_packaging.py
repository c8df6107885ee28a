"""The shipped artefacts around the code: package layout, Dockerfile, compose file."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_installed_code_lives_under_one_namespace():
    import deepresearch.agent
    import deepresearch.app
    import deepresearch.tools

    for mod in (deepresearch.app, deepresearch.agent, deepresearch.tools):
        assert mod.__name__.startswith("deepresearch.")
    # No top-level `tools` / `app` / `agent` module is importable from outside the checkout.
    names = "('tools', 'app', 'agent', 'train', 'evals')"
    code = f"import importlib.util as u; print([n for n in {names} if u.find_spec(n)])"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", timeout=60)
    assert proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_version_is_fast_and_prints():
    proc = subprocess.run([sys.executable, "-m", "deepresearch", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("deepresearch ")


def test_dockerfile_lints_clean():
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if not Path(hadolint).exists():
        pytest.skip("hadolint not installed (pip install -e .[dev])")
    proc = subprocess.run([hadolint, "--config", str(ROOT / ".hadolint.yaml"), str(ROOT / "Dockerfile")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_compose_wires_the_app_to_the_model_server():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    model, app = compose["services"]["model"], compose["services"]["app"]
    assert "--enable-lora" in model["command"]
    assert model["environment"]["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] == "True"
    assert app["environment"]["DEEPRESEARCH_MODEL__BASE_URL"] == "http://model:8000/v1"
    # The trainer publishes adapters under /data; the server must see the same volume.
    assert "data:/data" in model["volumes"] and "data:/data" in app["volumes"]


def test_every_source_folder_is_an_installed_package():
    # pyproject lists the packages by hand (the repo's top-level folders map to deepresearch.*): a new
    # sub-folder missing from the list would be silently absent from a non-editable install (the Docker image).
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed, dirs = set(config["packages"]), config["package-dir"]
    for package, folder in dirs.items():
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.parent.relative_to(ROOT / folder)
            if "__pycache__" in rel.parts:
                continue
            name = ".".join([package, *rel.parts])
            assert name in listed, f"{path.relative_to(ROOT)}: package {name} is not in pyproject's packages"


def test_every_data_file_in_a_source_folder_is_shipped():
    # A file the code reads at run time (prompts, the GGUF products kernel's C source, the demo data) is in a
    # non-editable install only if pyproject's package-data names it.
    import fnmatch
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    data, dirs = config["package-data"], config["package-dir"]
    for package, folder in dirs.items():
        for path in (ROOT / folder).rglob("*"):
            rel = path.relative_to(ROOT / folder)
            if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in rel.parts:
                continue
            owner = ".".join([package, *rel.parent.parts])
            assert any(fnmatch.fnmatch(path.name, pattern) for pattern in data.get(owner, [])), \
                f"{path.relative_to(ROOT)}: not in pyproject's package-data for {owner}"
