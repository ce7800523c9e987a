"""LoRA fine-tuning of a causal LM on chat-format data, loss on the answer only (the ``train`` extra).

The generic half of ``logic-consistency improve``: the hyperparameters of the two papers' recipes as
declared defaults (:mod:`.recipes`), the trainer (TRL's ``SFTTrainer``) with its checkpoints, manifest
and atomic adapter folder (:mod:`.trainer`, :mod:`..models.adapter_manifest`), its callbacks and loss history
(:mod:`.callbacks`), and the device it runs on (:mod:`.devices`: one device, the training dtype the
evaluation uses, QLoRA), and the one driver of every study (:mod:`.driver`: the folder, the kept
rows, the executor, the report). It knows no task family: the recipes that build training data from
the suite's own prompts live in their families (``tasks/pairwise/improve.py``,
``tasks/gv/improve.py``) and declare themselves to the driver. peft, TRL, transformers' Trainer and
accelerate are imported only when a training runs (:func:`.libraries.training_libraries`); without
the extra everything else works.
"""
