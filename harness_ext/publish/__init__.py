"""What a run writes and shows: the allowlist of what a file may record, direct runs that publish by
it, the guarded request cache, the checked results path."""
