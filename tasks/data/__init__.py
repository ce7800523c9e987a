"""Dataset loaders of the pairwise-judgement tasks (SummEval, NovelEval, CaTeRS).

Each module exposes ``load(...) -> datasets.DatasetDict`` for
``custom_dataset: !function logic_consistency.tasks.data.<module>.load``; it takes only its declared
keyword options, and a ``dataset_kwargs`` key it does not name is an error
(:meth:`logic_consistency.harness_ext.task.base.PromptedTask.check_loader_options`). The result has one
split ``"test"``; one row is one instance with the fields ``instance_id``, ``context`` (article /
query / unordered event list), ``items`` and ``item_ids``, ``human_scores`` (higher = the item that
should win the normal question) and ``aspect``.

Data come from ``$LOGIC_CONSISTENCY_DATA`` if set, else from the pinned online sources
(:mod:`._source`). Malformed input raises :class:`DatasetFormatError` (a ``ValueError``) naming the
file, line and field; :func:`check_human_scores` checks every loader's scores when the data load
(one finite number per item), so a custom loader's bad score is refused before any model call.
"""

from ._common import DatasetFormatError, apply_cap, cap_row, check_human_scores, check_max_items
from ._source import DATA_ENV_VAR

__all__ = ["DATA_ENV_VAR", "DatasetFormatError", "apply_cap", "cap_row", "check_human_scores", "check_max_items"]
