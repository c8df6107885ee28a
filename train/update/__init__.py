"""One update of the LoRA adapter: the round's samples → optimiser steps (torch + peft + accelerate).

grpo.py is the objective, readable in one sitting; updater.py steps it (and the choice loss) on the adapter;
batching.py, samples.py and grammar_masks.py turn traced LLM calls into tensors; device.py and launch.py say
where it runs (one CPU, one GPU, or many processes under `accelerate launch` with the configs in accelerate/).
"""
