"""Scheduling: the batching engine, its jobs, the batch's KV cache, prefix reuse and greedy-result reuse."""
