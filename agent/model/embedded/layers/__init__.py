"""The lean forward pass and what it computes with: products, bf16, attention split over two cores."""
