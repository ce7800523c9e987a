"""``lc-hf``, the prefix-sharing scorer: its backend, the prefix tree, the batch layout, and the
capture of a run's requests to score them elsewhere."""
