"""The embedded models, the backends' declared ``--model_args``, and an adapter: its weights, manifest, base and provenance."""
