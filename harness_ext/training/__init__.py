"""LoRA fine-tuning of a causal LM on chat-format data, loss on the answer only (the ``train`` extra).

The generic half of ``logic-consistency improve``: the hyperparameters of the two papers' recipes as
declared defaults (:mod:`.recipes`), the trainer with its checkpoints, manifest and atomic adapter
folder (:mod:`.trainer`, :mod:`.adapter`). It knows no task family: the studies that build training
data from the suite's own prompts live in their families (``tasks/pairwise/improve.py``,
``tasks/gv/improve.py``). peft, transformers' Trainer and accelerate are imported only when a
training runs (:func:`.libraries.training_libraries`); without the extra everything else works.
"""
