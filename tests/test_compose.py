"""docker-compose.yml read as the GPU box will read it: services, vLLM flags equal to `serve-model`'s, GPU
reservations, shared mounts, the environment the code needs, and .env.example naming every knob."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from deepresearch.agent.model.embedded.loaders.packaged_model import converted_dir
from deepresearch.agent.model.remote.server import VLLMServeSettings, vllm_command

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
VAR = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")
HF_CACHE = "/cache/huggingface"


def env_file(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text().splitlines() if "=" in line and not line.startswith("#"))
    return {k.strip(): v.strip() for k, v in pairs}


def resolve(value: str, env: dict[str, str] | None = None) -> str:
    """Compose's `${VAR:-default}` interpolation, with `env` as the .env file."""
    return VAR.sub(lambda m: (env or {}).get(m.group(1)) or (m.group(2) or ""), str(value))


def flags(command: list[str], env: dict[str, str] | None = None) -> dict[str, str | None]:
    """`--name=value` / `--name value …` / `--switch` → {name: value} (several values joined by spaces)."""
    out: dict[str, str | None] = {}
    args = [resolve(a, env) for a in command]
    for i, arg in enumerate(args):
        if not arg.startswith("--"):
            continue
        name, eq, value = arg.partition("=")
        following = []
        for nxt in args[i + 1:]:
            if nxt.startswith("--"):
                break
            following.append(nxt)
        out[name] = value if eq else (" ".join(following) or None)
    return out


def environment(service: str, env: dict[str, str] | None = None) -> dict[str, str]:
    return {k: resolve(v, env) for k, v in SERVICES[service]["environment"].items()}


def test_services_and_the_optional_searxng_profile():
    assert set(SERVICES) == {"model", "app", "searxng"}
    assert "profiles" not in SERVICES["model"] and "profiles" not in SERVICES["app"]
    assert SERVICES["searxng"]["profiles"] == ["searxng"]
    assert SERVICES["app"]["depends_on"]["model"]["condition"] == "service_healthy"
    assert "searxng" not in SERVICES["app"]["depends_on"]  # it is optional: the app must start without it


def test_the_server_and_the_api_come_back_after_a_crash():
    assert SERVICES["model"]["restart"] == "unless-stopped"
    assert SERVICES["app"]["restart"] == "unless-stopped"


def test_vllm_runs_with_the_flags_serve_model_uses():
    serve = VLLMServeSettings()
    ours = flags(vllm_command(serve, "MODEL", "NAME")[2:])  # after the venv's python and the launcher
    theirs = flags(SERVICES["model"]["command"])
    # The GPU adds the memory fraction; everything else is the same flag set as `deepresearch serve-model`.
    assert set(theirs) == set(ours) | {"--gpu-memory-utilization"}
    same = ("--max-model-len", "--max-lora-rank", "--max-loras", "--lora-target-modules", "--logprobs-mode", "--port")
    assert {f: theirs[f] for f in same} == {f: ours[f] for f in same}
    assert json.loads(theirs["--structured-outputs-config"]) == json.loads(ours["--structured-outputs-config"])
    assert theirs["--enable-lora"] is None and theirs["--dtype"] == "bfloat16"
    assert 0 < float(theirs["--gpu-memory-utilization"]) < 0.9  # room for the trainer on a shared GPU
    assert SERVICES["model"]["entrypoint"][-2:] == ["-m", "vllm.entrypoints.openai.api_server"]
    assert environment("model")["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] == "True"


def test_the_server_adapts_exactly_what_the_trainer_trains_and_not_lm_head():
    """An adapter may only touch modules the server wraps; lm_head's wrapper breaks prompt logprobs in a batch."""
    from deepresearch.train.config import LoraSettings

    served = flags(SERVICES["model"]["command"])["--lora-target-modules"].split()
    assert served == VLLMServeSettings().lora_target_modules == LoraSettings().target_modules
    assert "lm_head" not in served


def test_both_gpu_services_reserve_a_gpu_chosen_by_setting():
    for service, var in (("model", "VLLM_GPU"), ("app", "TRAIN_GPU")):
        (device,) = SERVICES[service]["deploy"]["resources"]["reservations"]["devices"]
        assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"]
        assert device["device_ids"] == [f"${{{var}:-0}}"]
    command = " ".join(SERVICES["model"]["command"])
    assert "${VLLM_GPU_MEMORY_UTILIZATION:-" in command


def test_data_hf_cache_and_models_are_shared_by_server_and_trainer():
    volumes = {s: [v.split("#")[0].strip() for v in SERVICES[s]["volumes"]] for s in ("model", "app")}
    for vols in volumes.values():
        assert "data:/data" in vols  # adapters: published by the app, loaded by the server
        assert f"hf-cache:{HF_CACHE}" in vols  # MODEL pulled by the server, read by the trainer
        assert "${MODELS_DIR:-./models}:/models:ro" in vols
    assert set(COMPOSE["volumes"]) == {"data", "hf-cache"}
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert f"HF_HOME={HF_CACHE}" in dockerfile and "DEEPRESEARCH_DATA_DIR=/data" in dockerfile


def test_hf_offline_is_a_runtime_default_not_baked_into_the_image():
    env_lines = re.search(r"^ENV (.*?)(?=^\S)", (ROOT / "Dockerfile").read_text(), re.S | re.M).group(1)
    assert "HF_HUB_OFFLINE" not in env_lines
    for service in ("model", "app"):
        assert environment(service)["HF_HUB_OFFLINE"] == "0"
        assert environment(service, {"HF_HUB_OFFLINE": "1"})["HF_HUB_OFFLINE"] == "1"


@pytest.mark.parametrize("dotenv", [None, ROOT / ".env.example"], ids=["defaults", "env-example"])
def test_the_app_talks_to_the_served_model_and_trains_its_weights(dotenv, tmp_path, monkeypatch):
    env = env_file(dotenv) if dotenv else None
    app, served = environment("app", env), flags(SERVICES["model"]["command"], env)
    assert app["DEEPRESEARCH_MODEL__BASE_URL"] == f"http://model:{served['--port']}/v1"
    assert app["DEEPRESEARCH_MODEL__NAME"] == served["--served-model-name"]
    assert app["MODEL"] == served["--model"] == environment("model", env)["MODEL"]  # the trainer's fallback
    if dotenv is None:  # the default model is the embedded one the image converts at build time
        assert served["--model"] == str(converted_dir(Path("/cache/deepresearch")))
    # Every DEEPRESEARCH_* value is a valid setting.
    from deepresearch.app.settings import load_settings

    for key, value in app.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("DEEPRESEARCH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))  # no config file of this machine
    settings = load_settings()
    assert settings.model.backend == "openai" and settings.model.base_url == app["DEEPRESEARCH_MODEL__BASE_URL"]
    assert settings.tools.search.backends[0] == "searxng"  # SearxNG, when its URL is set, is searched first
    assert not settings.tools.search.searxng_url  # not set by default: skipped, the app starts without it


def test_searxng_when_enabled_is_the_apps_first_backend_with_its_json_api_on():
    searx = yaml.safe_load((ROOT / "docker/searxng/settings.yml").read_text())
    assert "json" in searx["search"]["formats"] and searx["server"]["limiter"] is False
    mount = SERVICES["searxng"]["volumes"][0].split("#")[0].strip()
    assert mount == "./docker/searxng/settings.yml:/etc/searxng/settings.yml:ro"
    documented = (ROOT / ".env.example").read_text()
    url = re.search(r"^# SEARXNG_URL=(\S+)$", documented, re.M).group(1)
    assert url == environment("searxng")["SEARXNG_BASE_URL"].rstrip("/")
    assert environment("app", {"SEARXNG_URL": url})["DEEPRESEARCH_TOOLS__SEARCH__SEARXNG_URL"] == url


def test_the_sandbox_gets_what_bubblewrap_needs_in_a_container():
    assert {"seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"} <= set(
        SERVICES["app"]["security_opt"])


def test_env_example_names_every_variable_the_compose_file_reads():
    used = set(VAR.findall((ROOT / "docker-compose.yml").read_text()))
    documented = set(re.findall(r"^#? ?(\w+)=", (ROOT / ".env.example").read_text(), re.M))
    assert {name for name, _default in used} <= documented
    assert {"MODEL", "MODEL_NAME", "VLLM_GPU_MEMORY_UTILIZATION", "VLLM_GPU", "TRAIN_GPU"} <= set(
        env_file(ROOT / ".env.example"))


def test_compose_accepts_the_file():
    """Validated by Compose itself where it is installed (no engine needed for `config`)."""
    docker = shutil.which("docker")
    has_v2 = docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0
    command = [docker, "compose"] if has_v2 else [shutil.which("docker-compose")] if shutil.which(
        "docker-compose") else None
    if command is None:
        pytest.skip("neither `docker compose` nor docker-compose is installed")
    for extra in ([], ["--env-file", str(ROOT / ".env.example"), "--profile", "searxng"]):
        done = subprocess.run([*command, "-f", str(ROOT / "docker-compose.yml"), *extra, "config", "--quiet"],
                              capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert done.returncode == 0, done.stderr
