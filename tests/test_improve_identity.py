"""A study folder is its own proof (issue 39, item 3): each row records the identity of everything that
changes its numbers; a rerun checks every kept row (its ``row.json`` and its adapter's manifest) against
this run's identity and its data now, and refuses a difference naming the row, the field, kept and now,
or rebuilds it on request (``--rebuild-mismatched``); ``--merge-weights`` on a finished study writes the
merged weights. A GV study on the tiny model, its lm_eval runs replaced by sample files and its trainer
by one that writes the manifest the real one writes: no model runs."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("peft", reason="the train extra")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from tiny_model import tiny_base  # noqa: E402

from logic_consistency.harness_ext.models.adapter_manifest import (  # noqa: E402
    data_sha256,
    examples_sha256,
    is_complete,
    read_manifest,
    write_manifest,
)
from logic_consistency.harness_ext.models.base_hash import base_sha256  # noqa: E402
from logic_consistency.harness_ext.training import merge, trainer  # noqa: E402
from logic_consistency.harness_ext.training.study import Study, StudyFolderError  # noqa: E402
from logic_consistency.harness_ext.training.study_identity import RowMismatch  # noqa: E402
from logic_consistency.tasks.gv import improve  # noqa: E402

ROWS = ["round_0", "gv_round_1", "selftrain_round_1"]


class Fakes:
    """The lm_eval runs (sample files of prompt/answer pairs) and the trainer (a manifest as the real one
    writes it), counting what they are asked to do."""

    def __init__(self) -> None:
        self.trained: list[str] = []
        self.evaluated: list[tuple[str, str]] = []
        self.merged: list[Path] = []

    def evaluate(self, study: Any, row: str, split: str, adapter: Path | None) -> list[Path]:
        folder = study.study.row_dir(row) / f"{split}_eval"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "samples_logic_consistency_gv_arithmetic_x.jsonl"
        if not (folder / "done").is_file():
            self.evaluated.append((row, split))
            pairs = [{"prompt": f"Q{i} of {row}?", "answer": str(i)} for i in range(4)]
            path.write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
            (folder / "done").write_text("done\n")
        return [path]

    def train(self, job: Any) -> dict[str, Any]:
        if is_complete(job.out):
            return read_manifest(job.out)
        self.trained.append(job.label)
        staging = job.out.with_name("staging")
        staging.mkdir(parents=True)
        (staging / "adapter_model.safetensors").write_bytes(b"")
        manifest = {"base_model": str(job.base), "base_sha256": base_sha256(job.base), "recipe": job.recipe, "round": job.label,
                    "data_sha256": examples_sha256(job.examples),
                    "hyperparameters": job.settings.as_dict(), "seed": job.settings.seed,
                    "data_examples": len(job.examples), "steps": 1, "train_loss": 1.0, "train_tokens_per_s": None,
                    "wall_time_s": 0.1, "device": "cpu"}  # fmt: skip
        write_manifest(staging, job.out, manifest)
        return manifest

    def merge(self, adapter: Path, out: Path | None = None) -> Path:
        self.merged.append(adapter)
        target = merge.merged_folder(adapter)
        target.mkdir(exist_ok=True)
        return target


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> Fakes:
    fake = Fakes()

    def pairs(self: Any, samples: list[Path], *, consistent_only: bool) -> list[tuple[str, str, bool]]:
        lines = [json.loads(line) for path in samples for line in path.read_text().splitlines()]
        return [(p["prompt"] + ("" if consistent_only else " (all)"), p["answer"], False) for p in lines]

    monkeypatch.setattr(improve._GVStudy, "evaluate", lambda self, *a: fake.evaluate(self, *a))
    monkeypatch.setattr(improve._GVStudy, "training_pairs", pairs)
    monkeypatch.setattr(improve, "train_adapter", fake.train)
    monkeypatch.setattr(improve, "check_disjoint", lambda *args: None)
    monkeypatch.setattr(merge, "merge_adapter", fake.merge)
    return fake


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_base(tmp_path_factory.mktemp("tiny") / "base")


def _options(base: Path, out: Path, **changes: Any) -> improve.GVStudyOptions:
    options = improve.GVStudyOptions(base=base, out=out, limit=4, rounds=1, min_examples=2)
    return dataclasses.replace(options, **changes)


def test_the_manifest_hash_is_of_the_chat_records() -> None:
    """One user turn and one assistant turn each: another record would disown every kept adapter."""
    pairs = [("a prompt", " A"), ("another", "B")]
    records = [{"messages": [{"role": "user", "content": p}, {"role": "assistant", "content": a}]} for p, a in pairs]
    assert examples_sha256([trainer.Example(p, a) for p, a in pairs]) == data_sha256(records)


def test_each_row_records_its_identity_and_a_rerun_keeps_it(fakes: Fakes, base: Path, tmp_path: Path) -> None:
    improve.run_gv_study(_options(base, tmp_path / "s"))
    assert fakes.trained == ["consistency FT round 1 (data from round_0)", "SelfTrain round 1 (data from round_0)"]
    rows = {row: json.loads((tmp_path / "s" / "rows" / row / "row.json").read_text()) for row in ROWS}
    identity = rows["gv_round_1"]["identity"]
    assert (
        identity["chat_template"] is True
        and identity["base_sha256"] == base_sha256(base)
        and "base_path" not in identity
    )
    assert identity["limit"] == 4 and "seed" in identity["hyperparameters"]
    assert identity["hyperparameters"] == rows["gv_round_1"]["training"]["hyperparameters"]
    assert identity["recipe"] == "gv" and identity["data_examples"] == 4
    assert identity["data_sha256"] == rows["gv_round_1"]["training"]["data_sha256"]
    assert rows["selftrain_round_1"]["identity"]["data_sha256"] != identity["data_sha256"]
    assert "data_sha256" not in rows["round_0"]["identity"]
    fakes.trained.clear()
    improve.run_gv_study(_options(base, tmp_path / "s"))
    assert fakes.trained == [] and fakes.merged == []


def test_another_chat_template_is_refused_naming_both_values_or_rebuilt(
    fakes: Fakes, base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    improve.run_gv_study(_options(base, tmp_path / "s"))
    with pytest.raises(StudyFolderError, match=r"chat_template: kept True, now False.*--rebuild-mismatched"):
        improve.run_gv_study(_options(base, tmp_path / "s", chat_template=False))
    fakes.trained.clear()
    improve.run_gv_study(_options(base, tmp_path / "s", chat_template=False, rebuild_mismatched=True))
    assert len(fakes.trained) == 2
    assert "row gv_round_1: rebuilt (chat_template: kept True, now False" in capsys.readouterr().err
    kept = json.loads((tmp_path / "s" / "rows" / "round_0" / "row.json").read_text())
    assert kept["identity"]["chat_template"] is False
    other = Study(tmp_path / "s", {**json.loads((tmp_path / "s" / "study.json").read_text()), "study": "repair"}, True)
    with pytest.raises(StudyFolderError, match="study: kept 'gv', now 'repair'\\); choose another --out$"):
        other.open()  # another recipe's folder is never rebuilt over


def test_another_rows_adapter_is_refused_or_rebuilt(fakes: Fakes, base: Path, tmp_path: Path) -> None:
    improve.run_gv_study(_options(base, tmp_path / "s"))
    rows = tmp_path / "s" / "rows"
    shutil.rmtree(rows / "gv_round_1" / "adapter")
    shutil.copytree(rows / "selftrain_round_1" / "adapter", rows / "gv_round_1" / "adapter")
    with pytest.raises(RowMismatch, match=r"row gv_round_1 .*adapter data_sha256: kept '[0-9a-f]+', now '[0-9a-f]+'"):
        improve.run_gv_study(_options(base, tmp_path / "s"))
    (rows / "gv_round_1" / "row.json").unlink()  # unfinished: the kept adapter is checked before training on it
    with pytest.raises(RuntimeError, match=r"gv_round_1.*adapter round: kept 'SelfTrain round 1"):
        improve.run_gv_study(_options(base, tmp_path / "s"))
    fakes.trained.clear()
    improve.run_gv_study(_options(base, tmp_path / "s", rebuild_mismatched=True))
    assert fakes.trained == ["consistency FT round 1 (data from round_0)"]
    assert read_manifest(rows / "gv_round_1" / "adapter")["round"].startswith("consistency FT")


def test_a_row_whose_data_changed_is_refused_or_rebuilt(fakes: Fakes, base: Path, tmp_path: Path) -> None:
    improve.run_gv_study(_options(base, tmp_path / "s"))
    (samples,) = (tmp_path / "s" / "rows" / "round_0" / "train_eval").glob("samples_*.jsonl")
    samples.write_text(samples.read_text().replace("Q0", "Q9"))
    with pytest.raises(RowMismatch, match=r"row gv_round_1 .*data_sha256: kept '[0-9a-f]+', now '[0-9a-f]+'"):
        improve.run_gv_study(_options(base, tmp_path / "s"))
    fakes.trained.clear()
    improve.run_gv_study(_options(base, tmp_path / "s", rebuild_mismatched=True))
    assert sorted(fakes.trained) == [
        "SelfTrain round 1 (data from round_0)",
        "consistency FT round 1 (data from round_0)",
    ]


def test_merge_weights_on_a_finished_study_writes_them(fakes: Fakes, base: Path, tmp_path: Path) -> None:
    improve.run_gv_study(_options(base, tmp_path / "s"))
    fakes.trained.clear()
    improve.run_gv_study(_options(base, tmp_path / "s", merge_weights=True))
    assert fakes.trained == [] and sorted(p.parent.name for p in fakes.merged) == ROWS[1:]
    for row in ROWS[1:]:
        summary = json.loads((tmp_path / "s" / "rows" / row / "row.json").read_text())
        assert summary["training"]["merged"] == str(tmp_path / "s" / "rows" / row / "adapter-merged")
        assert (tmp_path / "s" / "rows" / row / "adapter-merged").is_dir()


def test_a_lost_evaluation_is_made_again_and_the_rows_on_its_data_checked(
    fakes: Fakes, base: Path, tmp_path: Path
) -> None:
    improve.run_gv_study(_options(base, tmp_path / "s", rounds=2))
    rows = tmp_path / "s" / "rows"
    shutil.rmtree(rows / "round_0" / "train_eval")  # made again, the same: the rounds trained on it are kept
    fakes.trained.clear()
    improve.run_gv_study(_options(base, tmp_path / "s", rounds=2))
    assert fakes.trained == [] and ("round_0", "train") in fakes.evaluated
    shutil.rmtree(rows / "gv_round_1" / "train_eval")  # round 2's data: only its unit would make it again
    with pytest.raises(RowMismatch, match="row gv_round_2 .*now 'unknown \\(gv_round_1 has no finished train-split"):
        improve.run_gv_study(_options(base, tmp_path / "s", rounds=2))


def test_a_study_moved_with_its_model_to_another_home_is_kept(fakes: Fakes, base: Path, tmp_path: Path) -> None:
    """The base is known by its content, not its path: the same weights in another home are the same base."""
    improve.run_gv_study(_options(base, tmp_path / "s"))
    home = tmp_path / "another-home"
    shutil.copytree(base, home / "models" / base.name)  # new inodes and times: hashed again, the same hash
    shutil.move(tmp_path / "s", home / "s")
    fakes.trained.clear()
    fakes.evaluated.clear()
    improve.run_gv_study(_options(home / "models" / base.name, home / "s"))
    assert fakes.trained == [] and fakes.evaluated == []  # every row kept, its adapters too
    assert str(tmp_path / "s") not in (home / "s" / "study.json").read_text()  # no path of the old home


def test_weights_of_the_same_size_replaced_are_another_base(
    fakes: Fakes, base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Weights replaced by others of the same size are seen (the content is hashed, once per file state)."""
    monkeypatch.setenv("LOGIC_CONSISTENCY_CACHE", str(tmp_path / "cache"))
    copy = shutil.copytree(base, tmp_path / "base")
    improve.run_gv_study(_options(copy, tmp_path / "s"))
    (weights,) = copy.glob("*.safetensors")
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1  # one bit of the last tensor: the same size, another model
    weights.write_bytes(bytes(data))
    with pytest.raises(StudyFolderError, match=r"base_sha256: kept '[0-9a-f]{64}', now '[0-9a-f]{64}'"):
        improve.run_gv_study(_options(copy, tmp_path / "s"))
    cache = json.loads((tmp_path / "cache" / "base_sha256.json").read_text(encoding="utf-8"))
    assert len(cache) == 2 and str(copy) not in json.dumps(cache)  # one entry per state of the files, no path
