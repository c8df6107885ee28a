"""A model served over HTTP: the OpenAI-compatible client, and running vLLM (launcher, installer)."""
