"""The model itself: its weights as torch modules and the LoRA adapters loaded on them."""
