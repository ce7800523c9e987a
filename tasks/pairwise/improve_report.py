"""The tables and README of ``improve repair`` (Liu et al. Table 3, and Tables 5-7 where the layout
asks for them: :mod:`.improve_rows`), written from the study's rows and identity."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from logic_consistency.harness_ext.training.study import Study
from logic_consistency.harness_ext.training.study_report import table_markdown
from logic_consistency.harness_ext.training.transfer import write_transfer_table
from logic_consistency.outputs import atomic_write, atomic_write_json
from logic_consistency.tasks.transfer import transfer_families

from .improve_data import MSMARCO
from .improve_rows import WIN_LOSS, layout_names

__all__ = ["FAMILY", "PAIRS_METRICS", "columns", "pairs_task", "write_report"]

#: The family this study improves (its column of the transfer table is the rows' own evaluation).
FAMILY = "pairwise"
#: Where Liu et al. evaluate Table 5: the 200 test queries of their MS MARCO sample (App. B).
MSMARCO_TASK = "logic_consistency_msmarco"
#: Table 5's PairS columns (:mod:`.pairs_task`).
PAIRS_METRICS = ("pairs_spearman", "pairs_spearman_calibrated")


def columns(metadata: Mapping[str, Any], *, pairs: bool = False) -> tuple[tuple[str, str], ...]:
    """Table 3's columns: H, s_tran(K) for the largest K of the run's ``ks`` (the paper's 5), s_comm, s_neg;
    with ``pairs`` Table 5's PairS and PairS calibrated (mean Spearman, :mod:`.pairs_task`)."""
    k = max(metadata.get("ks") or (5,))
    base = (("H", "human_agreement"), (f"s_tran({k})", f"s_tran_{k}"), ("s_comm", "s_comm"), ("s_neg", "s_neg"))
    return base + ((("PairS", "pairs_spearman"), ("PairS calibrated", "pairs_spearman_calibrated")) if pairs else ())


def pairs_task(task: str) -> str:
    """The PairS variant of a pairwise task (``logic_consistency_caters`` -> ``logic_consistency_caters_pairs``)."""
    return f"{task}_pairs"


def _origin(source: Mapping[str, Any] | None) -> str:
    """Where the training preferences came from, in words."""
    if not source:
        return "`instance_split: train`"
    where = f"`{source.get('file') or source.get('hub') or source.get('url')}`"
    if source["name"] == MSMARCO:
        drawn = source.get("sample") or {}
        of = (
            f" of the {drawn['train_queries']} training queries of a seeded {drawn['sampled']}-query sample"
            if drawn
            else ""
        )
        return (f"MS MARCO ({source['queries']} queries{of}, {source['comparisons']} comparisons from the GPT-3.5 "
                f"rankings of {where}, Sun et al. 2023)")  # fmt: skip
    split = ", train split" if source.get("split") else ""
    return f"Summarize from Feedback ({source['posts']} posts, {source['comparisons']} comparisons of {where}{split})"


def _variants(identity: Mapping[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """What the layout adds to Table 3, and where it is the suite's variant rather than the paper's."""
    notes = []
    if identity.get("methods"):
        notes.append("Table 7: one REPAIR-ed row per rank estimation method (W-L win-loss rate, ELO Elo rating, "
                     "B-T Bradley-Terry; `metrics/ranking.py`).")  # fmt: skip
    sampled = [
        f"{r['label']} {r['downsampled']['from']} -> {r['downsampled']['to']}" for r in rows if r.get("downsampled")
    ]
    if identity.get("downsample_to"):
        notes.append("Table 6: each REPAIR-ed row's training examples down-sampled at random (seeded) to the "
                     f"perturbed row's count: {'; '.join(sampled) or 'no trained row yet'}.")  # fmt: skip
    if identity.get("pairs"):
        where = ("the 200 test queries of the paper's MS MARCO sample, as the paper" if identity["tasks"] == MSMARCO_TASK
                 else "the task's own test split, not the paper's MS MARCO test queries: the suite's variant")  # fmt: skip
        notes.append(f"Table 5: PairS columns from `{pairs_task(identity['tasks'])}` (mean Spearman over "
                     f"`pairs_runs` runs), evaluated on {where}.")  # fmt: skip
    return notes


def _training_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The README's training table: one line per trained row."""
    lines = [
        "| row | training examples | answers (share of the first letter) | steps | train loss | tokens/s | wall s | device |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        t = r.get("training")
        if t:
            lines.append(
                f"| {r['label']} | {t['data_examples']} | {_letters(r.get('answer_letters'))} | {t['steps']} | "
                f"{t['train_loss']:.4f} | {'undefined' if t['train_tokens_per_s'] is None else t['train_tokens_per_s']} | "
                f"{t['wall_time_s']} | {t['device']} |"
            )
    return lines


def _letters(counts: Mapping[str, int] | None) -> str:
    """``A 812 / B 809 (50.1%)``: the training answers per letter (a row written before they were counted: -)."""
    if not counts:
        return "-"
    total = sum(counts.values())
    first = next(iter(counts.values()))
    return " / ".join(f"{letter} {n}" for letter, n in counts.items()) + f" ({100 * first / total:.1f}%)"


def write_report(study: Study, rows: list[dict[str, Any]]) -> None:
    """``table.md``, ``table.json`` and the README (with ``transfer.md`` where asked) of the study's rows."""
    identity = study.identity
    methods = identity.get("methods") or [WIN_LOSS]
    names = layout_names(methods=methods, downsampled=bool(identity.get("downsample_to")),
                         pairs=bool(identity.get("pairs")), train_data=(identity.get("train_data") or {}).get("name", ""))  # fmt: skip
    table = table_markdown(
        [(r["label"], r["metrics"]) for r in rows], columns(identity["metadata"], pairs=bool(identity.get("pairs")))
    )
    atomic_write(study.out / "table.md", [table.encode()])
    atomic_write_json(study.out / "table.json", {"study": dict(identity), "rows": rows, "layout": names}, indent=2)
    lines = [
        f"# REPAIR fine-tuning study (Liu et al. {', '.join(names)} layout)",
        "",
        f"Base `{identity['base']}`, task `{identity['tasks']}`, `--limit {identity['limit']}` documents per split, "
        f"{identity['flip']:.0%} of the training labels flipped in the perturbed data. Training data from "
        f"{_origin(identity.get('train_data'))}, every row evaluated on `instance_split: test`. Cells: mean in "
        "percent [95% bootstrap interval] (instances).",
        "",
        *[f"- {note}" for note in _variants(identity, rows)],
        "",
        table,
        *_training_lines(rows),
    ]
    if identity.get("transfer"):
        families = transfer_families(FAMILY, identity["tasks"], identity["metadata"])
        lines += ["", write_transfer_table(study.out, [(r["label"], r.get("transfer") or {}) for r in rows], families)]
    atomic_write(study.out / "README.md", ["\n".join(lines).encode() + b"\n"])
