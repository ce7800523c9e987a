"""The embedded models, what a backend declares (``backend.py``) and the validator of its ``--model_args``, and an adapter: its weights, manifest, base and provenance."""
