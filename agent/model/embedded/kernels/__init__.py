"""Matrix products on the GGUF's quantised blocks: the C kernel, its build, the block products."""
