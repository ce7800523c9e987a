"""The invariance family: any lm-eval multiple-choice task, wrapped and posed under option variants."""
