"""Dataset loaders of the pairwise-judgement tasks (SummEval, NovelEval, CaTeRS).

Each module exposes ``load(...) -> datasets.DatasetDict`` for
``custom_dataset: !function logic_consistency.tasks.data.<module>.load``; it takes only its declared
keyword options (no ``**kwargs``). The task classes pass a loader only the ``dataset_kwargs`` and
``metadata`` keys it names, and a ``dataset_kwargs`` key it does not name is an error
(:meth:`logic_consistency.harness_ext.base.PromptedTask.check_loader_options`). The pairwise task
class applies ``max_items`` itself; the loaders keep their own ``max_items`` for direct use.
The result has one split ``"test"``; one row is one instance (the item set of one article, query or
story) with the fields

- ``instance_id: str``
- ``context: str`` (article / query / unordered event list)
- ``items: list[str]`` and ``item_ids: list[str]``
- ``human_scores: list[float]`` (higher = the item that should win the normal question)
- ``aspect: str``

Data come from the directory named by ``LOGIC_CONSISTENCY_DATA`` if it is set (layout of the
project's ``raw/`` folder), else from the pinned online sources (see :mod:`._source`). Malformed
input raises :class:`DatasetFormatError` (a ``ValueError``) naming the file, line and field. The
pairwise task class checks every loader's ``human_scores`` again when the data loads
(:func:`check_human_scores`: one finite number per item), so a custom loader's bad score is refused
before any model call too.
"""

from ._common import DatasetFormatError, cap_row, check_human_scores
from ._source import DATA_ENV_VAR

__all__ = ["DATA_ENV_VAR", "DatasetFormatError", "cap_row", "check_human_scores"]
