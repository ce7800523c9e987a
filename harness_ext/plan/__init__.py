"""The cost plan: what a run would ask a model, counted without a model, its table and the ``plan``
command."""
