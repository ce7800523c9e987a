"""The pieces of ``improve repair``'s appendix tables, without a model: Table 7's rows per rank estimation
method, Table 6's seeded down-sampling, the layout names, the MS MARCO loader of Table 5 on its fixture
(the authors' permutation reading), and the transfer table's cells."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logic_consistency.harness_ext.training.transfer import TransferFamily, transfer_markdown
from logic_consistency.options import OptionError
from logic_consistency.tasks.data import DatasetFormatError
from logic_consistency.tasks.data.msmarco import (
    SAMPLE,
    SAMPLE_SEED,
    TRAIN_QUERIES,
    load,
    load_part,
    load_with_source,
    paper_split,
    parse_permutation,
)
from logic_consistency.tasks.pairwise.improve_options import RepairStudyOptions
from logic_consistency.tasks.pairwise.improve_rows import downsample, layout_names, row_specs
from logic_consistency.tasks.pairwise.preferences import from_loader
from logic_consistency.tasks.transfer import transfer_families

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "data" / "msmarco"
ALL_ROWS = ("zero_shot", "perturbed", "repaired", "repaired_neg")


def test_win_loss_alone_keeps_table_3s_rows_and_each_method_gets_its_repaired_rows() -> None:
    assert [s.name for s in row_specs(["win_loss"], ALL_ROWS, sampled=False)] == list(ALL_ROWS)
    specs = row_specs(["win_loss", "elo", "bt"], ("perturbed", "repaired"), sampled=True)
    assert [(s.name, s.label, s.method) for s in specs] == [
        ("perturbed", "Perturbed", None),
        ("repaired", "REPAIR-ed W-L (sampled)", "win_loss"),
        ("repaired_elo", "REPAIR-ed ELO (sampled)", "elo"),
        ("repaired_bt", "REPAIR-ed B-T (sampled)", "bt"),
    ]
    with pytest.raises(OptionError, match="--method: 'elo,elo' is not a list of distinct methods"):
        RepairStudyOptions(base=Path("base"), out=Path("out"), methods=("elo", "elo"))


def test_downsampling_is_seeded_keeps_order_and_records_what_it_did() -> None:
    items = list(range(50))
    first, record = downsample(items, 10, seed=3)
    assert first == downsample(items, 10, seed=3)[0] != downsample(items, 10, seed=4)[0]
    assert first == sorted(first) and len(set(first)) == 10 and record == {"from": 50, "to": 10, "seed": 3}
    assert downsample(items[:5], 10, seed=3) == (items[:5], {"from": 5, "to": 5, "seed": 3})


def test_the_layout_names_the_papers_tables() -> None:
    assert layout_names(methods=["win_loss"], downsampled=False, pairs=False, train_data="") == ["Table 3"]
    names = layout_names(methods=["win_loss", "bt"], downsampled=True, pairs=True, train_data="msmarco")
    assert names == ["Table 3", "Table 5", "Table 6", "Table 7"]


def test_a_gpt_answer_is_read_as_the_authors_read_it() -> None:
    assert parse_permutation("[2] > [1] > [3]", 3) == [1, 0, 2]
    assert parse_permutation("[3] > [3] > [9] > [1]", 4) == [2, 0, 1, 3]  # repeat and 9 dropped, 2 and 4 appended


def test_msmarco_rows_score_each_passage_by_its_place_in_the_gpt_ranking() -> None:
    rows, source = load_with_source(FIXTURE)
    assert source["queries"] == 10 and source["name"] == "msmarco" and len(source["sha256"]) == 64
    assert rows[1]["human_scores"] == [2.0, 3.0, 0.0, 1.0]  # "[2] > [1] > [4] > [3]"
    prefs = from_loader(rows)
    assert sum(len(inst.comparisons) for inst in prefs.values()) == 10 * 6
    assert len(load_with_source(FIXTURE, limit=2)[0]) == 2
    assert load_with_source(FIXTURE, passages=2)[0][2]["human_scores"] == [1.0, 0.0]


def test_the_papers_msmarco_sample_is_1k_random_queries_split_800_200() -> None:
    rows = [{"instance_id": f"q{k}"} for k in range(10_000)]  # RankGPT's file holds 10K queries
    train, test, drawn = paper_split(rows)
    assert (len(train), len(test)) == (TRAIN_QUERIES, SAMPLE - TRAIN_QUERIES) == (800, 200)
    ids = {r["instance_id"] for r in train} | {r["instance_id"] for r in test}
    assert len(ids) == 1000 and [r["instance_id"] for r in train][:3] != ["q0", "q1", "q2"]  # random, not the first
    assert paper_split(rows) == (train, test, drawn) and drawn["seed"] == SAMPLE_SEED  # seeded
    assert drawn == {"queries_read": 10_000, "sampled": 1000, "seed": SAMPLE_SEED, "train_queries": 800,
                     "test_queries": 200}  # fmt: skip


def test_the_msmarco_task_is_the_held_out_queries_and_training_never_sees_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURE.parent))
    train, source = load_part(None, "train")
    test = load(max_items=None)["test"]
    assert (len(train), len(test)) == (source["sample"]["train_queries"], source["sample"]["test_queries"]) == (8, 2)
    assert not {r["context"] for r in train} & set(test["context"])
    assert set(test["instance_half"]) == {"test"}  # instance_split: test keeps all of them (not a hash's half)
    assert len(load_part(None, "train", limit=3)[0]) == 3


def test_a_malformed_msmarco_folder_is_named(tmp_path: Path) -> None:
    for name in ("marco-train-10k.jsonl", "marco-train-10k-gpt3.5.json"):
        (tmp_path / name).write_text((FIXTURE / name).read_text())
    (tmp_path / "marco-train-10k-gpt3.5.json").write_text(json.dumps(["[1] > [2]"]))
    with pytest.raises(DatasetFormatError, match="1 answers for the 10 queries"):
        load_with_source(tmp_path)
    (tmp_path / "marco-train-10k.jsonl").unlink()
    with pytest.raises(FileNotFoundError, match="marco-train-10k.jsonl"):
        load_with_source(tmp_path)


def test_the_transfer_table_has_a_cell_per_family_metric_and_says_undefined() -> None:
    families = transfer_families("pairwise", "logic_consistency_noveleval", {"ks": [3]})
    assert [f.task for f in families] == [
        "logic_consistency_noveleval", "logic_consistency_gv_arithmetic", "logic_consistency_causal_ranking"
    ]  # fmt: skip
    gv = TransferFamily("gv", "t", (("GV", "gv_consistency"),))
    cell = {"mean": 0.5, "ci95": [0.25, 0.75], "n": 4}
    table = transfer_markdown([("Zero-shot", {"gv": {"metrics": {"gv_consistency": cell}}}), ("X", {})], [gv])
    assert "| Zero-shot | 50.0 [25.0, 75.0] (n=4) |" in table and "| X | undefined |" in table
