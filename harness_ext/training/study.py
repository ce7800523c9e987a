"""An improve study's folder: one study per folder (its identity in ``study.json``), its rows' folders,
the finished rows kept (``row.json``, written last, with the hashes a rerun verifies), and a kept row's
merged weights as a unit of their own. It knows no task family.

The study's other jobs sit beside it, each in its module: how its units run (:mod:`.study_executor`),
its ``lm_eval`` runs (:mod:`.study_eval`) and its tables (:mod:`.study_report`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.models.adapter_manifest import is_complete
from logic_consistency.outputs import atomic_write_json

from .merge import merged_folder
from .study_executor import RanOn, StudyUnit
from .study_identity import check_row, row_hashes
from .study_lock import LOCK_NAME, check_out

__all__ = ["STUDY_FILE", "Study", "StudyFolderError", "refuse_linked_rows"]

#: The file that says which study a folder holds.
STUDY_FILE = "study.json"


class StudyFolderError(ValueError):
    """The output folder holds another study, or something else."""


def refuse_linked_rows(out: Path) -> None:
    """Refuse a study folder whose ``rows``, a row or a row's folder (its evaluation, its adapter) is a
    symbolic link, naming it and its target: a rebuilt row is removed with what it holds, and what a link
    points to is another folder's, so nothing is rewritten or removed first.

    Raises:
        StudyFolderError: Naming the link, as a path under ``--out``, and its target.
    """
    rows = out / "rows"
    candidates = [rows]
    if rows.is_dir() and not rows.is_symlink():
        candidates += sorted(rows.iterdir())
        candidates += sorted(
            p for row in candidates[1:] if row.is_dir() and not row.is_symlink() for p in row.iterdir()
        )
    for path in candidates:
        if path.is_symlink():
            raise StudyFolderError(
                f"--out {out}: {path.relative_to(out)} is a symbolic link (to {os.readlink(path)!r}); a study "
                "keeps its rows in its own folder (a rebuilt row is removed with its contents): replace the link "
                "by a copy of what it points to, or choose another --out"
            )


@dataclass(frozen=True)
class Study:
    """One study's folder and identity (recipe, base, tasks, limit, chat template, options: what makes
    its rows comparable); ``rebuild_mismatched`` rebuilds what differs instead of refusing it."""

    out: Path
    identity: Mapping[str, Any]
    rebuild_mismatched: bool = False

    def open(self) -> None:
        """Create the folder, or check that it holds this same study (its finished rows are then kept).

        With ``rebuild_mismatched``, a folder of the same recipe whose identity differs takes this one
        (each of its rows then differs from it, and :meth:`kept` rebuilds it).

        Raises:
            StudyFolderError: The folder holds another study (naming each field, kept and now), files
                that are not a study's, or a row that is a symbolic link (:func:`refuse_linked_rows`).
        """
        marker = self.out / STUDY_FILE
        refuse_linked_rows(self.out)  # before study.json is rewritten or any row removed
        if marker.is_file():
            self._reopen(marker)
            return
        check_out(self.out)
        if self.out.exists() and any(path.name != LOCK_NAME for path in self.out.iterdir()):
            raise StudyFolderError(
                f"--out {self.out}: exists and is not an improve study's folder; choose another --out"
            )
        self.out.mkdir(parents=True, exist_ok=True)
        atomic_write_json(marker, dict(self.identity), indent=2)

    def _reopen(self, marker: Path) -> None:
        """The folder holds a study: this same one, or (``rebuild_mismatched``, same recipe) one it takes over."""
        found = json.loads(marker.read_text(encoding="utf-8"))
        if found == dict(self.identity):
            return
        differ = sorted(k for k in {*found, *self.identity} if found.get(k) != self.identity.get(k))
        listed = "; ".join(f"{k}: kept {found.get(k)!r}, now {self.identity.get(k)!r}" for k in differ)
        other_recipe = found.get("study") != self.identity.get("study")  # never rebuilt over
        if other_recipe or not self.rebuild_mismatched:
            hint = "" if other_recipe else ", or rerun with --rebuild-mismatched"
            raise StudyFolderError(f"--out {self.out}: holds another study ({listed}); choose another --out{hint}")
        print(f"logic-consistency improve: {marker}: rebuilding the rows made otherwise ({listed})", file=sys.stderr)
        atomic_write_json(marker, dict(self.identity), indent=2)

    def row_dir(self, row: str) -> Path:
        """The folder of one row (its adapter, its evaluation, its ``row.json``)."""
        return self.out / "rows" / row

    def _record(self, row: str) -> dict[str, Any] | None:
        """A finished row's ``row.json`` as written (its summary and its ``hashes``), else ``None``."""
        path = self.row_dir(row) / "row.json"
        return dict(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else None

    def finished(self, row: str) -> dict[str, Any] | None:
        """A finished row's summary, as the unit that finished it returned it (``row.json`` without the
        ``hashes`` that :meth:`kept` verifies), else ``None``: a rerun's tables are the first run's."""
        record = self._record(row)
        return None if record is None else {key: value for key, value in record.items() if key != "hashes"}

    def kept(self, row: str, identity: Mapping[str, Any]) -> dict[str, Any] | None:
        """A finished row's summary when it was made as this run would make it (``identity``), else ``None``.

        A query: it reads and checks, and writes nothing but the removal of a row made otherwise when
        ``rebuild_mismatched`` asks for it. An unfinished row's kept adapter is checked too. A kept row's
        merged weights are a unit of their own (:meth:`merge_unit`), made where the executor runs units.

        Raises:
            RowMismatch: Naming the row, each field that differs, kept and now.
        """
        if not check_row(self.row_dir(row), self._record(row), identity, rebuild=self.rebuild_mismatched):
            return None
        return self.finished(row)

    def merge_unit(self, row: str) -> StudyUnit | None:
        """``--merge-weights`` on a kept row: the unit that writes its merged weights (``None``: there already,
        or the row has no adapter), so that a rerun never silently does nothing and the driver merges nothing."""
        summary = self.finished(row)
        adapter = self.row_dir(row) / "adapter"
        if summary is None or not summary.get("training") or not is_complete(adapter):
            return None
        merged = merged_folder(adapter)
        if summary["training"].get("merged") == str(merged) and merged.is_dir():
            return None
        return StudyUnit(f"{row} (merged weights)", (row,), partial(_merge_kept, self, row))

    def finish(self, row: str, summary: Mapping[str, Any]) -> None:
        """Record a row as finished (written last, atomically: a rerun keeps it), with the SHA-256 of
        what it measured (:func:`.study_identity.row_hashes`), which a rerun verifies."""
        fields = {key: value for key, value in summary.items() if key != "hashes"}
        hashes = row_hashes(self.row_dir(row), fields)
        atomic_write_json(self.row_dir(row) / "row.json", {**fields, "hashes": hashes}, indent=2)


def _merge_kept(study: Study, row: str, ran_on: RanOn) -> list[dict[str, Any]]:
    """The unit of :meth:`Study.merge_unit`: merge the kept row's adapter into its base, record it in ``row.json``."""
    from .merge import merge_adapter

    summary = study.finished(row) or {}
    merged = str(merge_adapter(study.row_dir(row) / "adapter"))
    summary = {**summary, "training": {**summary["training"], "merged": merged}}
    study.finish(row, summary)
    return [summary]
