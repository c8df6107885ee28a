"""`deepresearch doctor` is honest: optional parts missing are warnings (exit 0), the demo model says it is
one and how to use a bigger one, and the configured search backends are probed like a run uses them."""

from __future__ import annotations

import json
from pathlib import Path

from deepresearch.tools.config import ToolSettings
from deepresearch.tools.index.build import index_paths
from deepresearch.tools.index.registry import IndexRegistry
from deepresearch.tools.localweb.server import LocalWebServer

from .helpers import clean_env, cli


def lines(stdout: str) -> dict[str, str]:
    """doctor's output by check name: {'search': '✔ search      working: …'}."""
    return {line.split()[1]: line for line in stdout.splitlines() if len(line.split()) > 1}


def local_only(tmp_path: Path, **extra: str) -> dict[str, str]:
    return clean_env(tmp_path, DEEPRESEARCH_TOOLS__SEARCH__BACKENDS='["local"]', **extra)


def test_missing_vllm_is_a_warning_and_the_demo_model_says_so(tmp_path: Path):
    proc = cli("doctor", env=local_only(tmp_path, DEEPRESEARCH_SERVE__VENV=str(tmp_path / "no-vllm")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = lines(proc.stdout)
    vllm = found["vllm"]
    assert vllm.startswith("!") and "not installed" in vllm and "serve-model --install" in vllm
    quality = found["quality"]
    assert quality.startswith("!") and "demo" in quality
    assert "DEEPRESEARCH_MODEL__BACKEND=openai" in quality and "DEEPRESEARCH_MODEL__BASE_URL=" in quality
    assert found["search"].startswith("✔") and "local (demo)" in found["search"]
    assert found["kernel"].startswith("✔") and "4-bit weights" in found["kernel"]
    assert found["bf16"].startswith("✔") and "bf16 products" in found["bf16"] and " ms in bf16" in found["bf16"]


def test_no_c_compiler_is_a_warning_with_the_fix(tmp_path: Path):
    proc = cli("doctor", env=local_only(tmp_path, CC=str(tmp_path / "no-cc"), DEEPRESEARCH_MODEL__BF16_PRODUCTS="off"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kernel = lines(proc.stdout)["kernel"]
    assert kernel.startswith("!") and "no-cc" in kernel and "fp32" in kernel and "apt-get install gcc" in kernel
    assert "bf16 products off (setting model.bf16_products)" in lines(proc.stdout)["bf16"]


def test_search_backends_are_probed(tmp_path: Path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "ae", "title": "Analytical Engine",
                                  "text": "The Analytical Engine was designed by Charles Babbage."}) + "\n")
    registry = IndexRegistry(ToolSettings(data_dir=tmp_path / "data"))
    index_paths(registry, "mine", [corpus])
    server = LocalWebServer(registry.open("mine")).start()  # a real SearxNG-compatible endpoint
    try:
        env = clean_env(tmp_path, DEEPRESEARCH_INDEX="mine", DEEPRESEARCH_TOOLS__SEARCH__SEARXNG_URL=server.url,
                        DEEPRESEARCH_TOOLS__SEARCH__BACKENDS='["searxng", "tavily", "local"]')
        working = lines(cli("doctor", env=env).stdout)["search"]
    finally:
        server.stop()
        registry.close()
    assert working.startswith("✔") and "searxng answers" in working and "local (mine)" in working
    assert "skipped: tavily (no key)" in working

    # The server is gone: the configured SearxNG fails its probe; the chain still has the local index.
    env["DEEPRESEARCH_TOOLS__SEARCH__BACKENDS"] = '["searxng", "local"]'
    proc = cli("doctor", env=env)
    failing = lines(proc.stdout)["search"]
    assert failing.startswith("!") and "failing: searxng" in failing and "working: local (mine)" in failing


def test_no_usable_search_backend_fails(tmp_path: Path):
    proc = cli("doctor", env=local_only(tmp_path, DEEPRESEARCH_INDEX="nosuchindex"))
    assert proc.returncode == 1
    search = lines(proc.stdout)["search"]
    assert search.startswith("✘") and "no working search backend" in search and "nosuchindex" in search
