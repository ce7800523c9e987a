"""What the suite's task classes stand on: base classes, multi-stage tasks, the run in progress,
placeholder requests, data files' identity, and ``check-task``."""
