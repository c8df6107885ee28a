"""What token comes next: grammars, their disk store, jump-forward drafts, a step's logits, sampling."""
