"""Samples to and from Parquet, in the column layout verl's PPO/GRPO actor consumes.

One row per sample (= one LLM call). verl's names: `prompts` and `responses` (token ids),
`response_mask` (1 = a token the model generated and the loss counts), `rollout_log_probs` (the
sampler's logprobs), `advantages` (one per response token, as verl's token-level tensor), `uid`
(the group id verl uses for GRPO grouping). Our extra columns keep provenance (run, role, weight).
This file is also how `accelerate launch` workers receive a round's samples.
"""

from __future__ import annotations

from pathlib import Path

from .samples import TrainingSample


def write_samples(samples: list[TrainingSample], path: Path) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {
        "uid": [s.group_id for s in samples],
        "prompts": [s.prompt_ids for s in samples],
        "responses": [s.completion_ids for s in samples],
        "response_mask": [[1] * len(s.completion_ids) for s in samples],
        "rollout_log_probs": [s.sampling_logprobs for s in samples],
        "advantages": [[s.advantage] * len(s.completion_ids) for s in samples],
        "sample_id": [s.sample_id for s in samples],
        "run_id": [s.run_id for s in samples],
        "role": [s.role for s in samples],
        "weight": [s.weight for s in samples],
        "truncated": [s.truncated for s in samples],
    }
    schema = pa.schema([
        ("uid", pa.string()),
        ("prompts", pa.list_(pa.int32())),
        ("responses", pa.list_(pa.int32())),
        ("response_mask", pa.list_(pa.int8())),
        ("rollout_log_probs", pa.list_(pa.float64())),
        ("advantages", pa.list_(pa.float64())),
        ("sample_id", pa.string()),
        ("run_id", pa.string()),
        ("role", pa.string()),
        ("weight", pa.float64()),
        ("truncated", pa.bool_()),
    ])
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns, schema=schema), path)
    return len(samples)


def read_samples(path: Path) -> list[TrainingSample]:
    import pyarrow.parquet as pq

    out = []
    for row in pq.read_table(path).to_pylist():
        out.append(TrainingSample(
            sample_id=row["sample_id"], run_id=row["run_id"], group_id=row["uid"], role=row["role"],
            prompt_ids=row["prompts"], completion_ids=row["responses"],
            sampling_logprobs=row["rollout_log_probs"],
            advantage=row["advantages"][0] if row["advantages"] else 0.0,
            weight=row["weight"], truncated=row["truncated"],
        ))
    return out
