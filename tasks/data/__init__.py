"""Dataset loaders of the pairwise-judgement tasks (SummEval, NovelEval, CaTeRS).

Each module exposes ``load(**kwargs) -> datasets.DatasetDict`` for
``custom_dataset: !function logic_consistency.tasks.data.<module>.load``. The pairwise task class
calls a loader with its own ``dataset_kwargs`` (plus ``seed``) and applies ``max_items`` itself; the
GV and causal loaders are called by lm-eval as ``load(**metadata, **dataset_kwargs)``, so these
loaders still accept and ignore unknown keyword arguments (and keep their own ``max_items`` for
direct use).
The result has one split ``"test"``; one row is one instance (the item set of one article, query or
story) with the fields

- ``instance_id: str``
- ``context: str`` (article / query / unordered event list)
- ``items: list[str]`` and ``item_ids: list[str]``
- ``human_scores: list[float]`` (higher = the item that should win the normal question)
- ``aspect: str``

Data come from the directory named by ``LOGIC_CONSISTENCY_DATA`` if it is set (layout of the
project's ``raw/`` folder), else from the pinned online sources (see :mod:`._source`). Malformed
input raises :class:`DatasetFormatError` (a ``ValueError``) naming the file, line and field.
"""

from ._common import DatasetFormatError, cap_row
from ._source import DATA_ENV_VAR

__all__ = ["DATA_ENV_VAR", "DatasetFormatError", "cap_row"]
