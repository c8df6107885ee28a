"""Files in: the packaged GGUF and its fp32 conversion, a GGUF's tensor table, a LoRA adapter's files."""
