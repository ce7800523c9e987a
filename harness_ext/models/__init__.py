"""The embedded models and the backends' declared ``--model_args``."""
