"""A tuned model as a leaderboard row: ``peft=ADAPTER`` whose base is not the row's is refused before any
run (naming both), through the leaderboard's preflight; the row's provenance shows the base and recipe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logic_consistency.harness_ext.training.adapter import write_manifest
from logic_consistency.harness_ext.training.provenance import adapter_provenance, check_adapter_base
from logic_consistency.leaderboard.run.modellist import ModelSpec
from logic_consistency.leaderboard.run.preflight import check_model_args


def adapter(tmp_path: Path, base: Path, name: str = "adapter") -> Path:
    """An adapter folder as the trainer leaves it (the manifest written last, then renamed)."""
    staging = tmp_path / f"{name}.partial"
    staging.mkdir()
    (staging / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": str(base)}))
    (staging / "adapter_model.safetensors").write_bytes(b"")
    manifest = {"base_model": str(base), "base_sha256": "ab" * 32, "recipe": "repair", "round": "REPAIR-ed",
                "split": "train", "data_sha256": "cd" * 32, "data_examples": 18, "hyperparameters": {"lr": 5e-5},
                "seed": 1234, "device": "cpu", "libraries": {"torch": "2"}}  # fmt: skip
    write_manifest(staging, tmp_path / name, manifest)
    return tmp_path / name


def spec(model_args: str, backend: str = "hf") -> ModelSpec:
    return ModelSpec(name="tuned", backend=backend, model_args=model_args, tasks="logic_consistency_caters",
                     where="models.yaml entry 3 (tuned)")  # fmt: skip


def test_an_adapter_on_another_base_is_refused_naming_both(tmp_path: Path) -> None:
    base, other = tmp_path / "smol", tmp_path / "gemma"
    folder = adapter(tmp_path, base)
    check_adapter_base(f"pretrained={base},peft={folder}")  # its own base: accepted
    check_adapter_base(f"pretrained={base}")  # no adapter: nothing to check
    with pytest.raises(ValueError) as caught:
        check_model_args(spec(f"pretrained={other},peft={folder}"))
    assert str(caught.value) == (
        f"models.yaml entry 3 (tuned): model_args: peft={folder}: the adapter was trained on base {base}, "
        f"but this row's base is {other}; use the adapter with the base it was trained on"
    )
    with pytest.raises(ValueError, match=r"entry 3 \(tuned\): model_args: peft=.*nowhere: no such adapter folder"):
        check_model_args(spec(f"pretrained={base},peft={tmp_path / 'nowhere'}"))


def test_an_embedded_model_and_a_plain_peft_adapter_are_checked_too(tmp_path: Path) -> None:
    converted = tmp_path / "models" / "smollm2-135m-instruct-0.1.2-98362432"
    folder = adapter(tmp_path, converted)
    check_model_args(spec(f"model=smollm2-135m-instruct,peft={folder}", backend="lc-embedded"))
    with pytest.raises(ValueError, match="trained on base .*smollm2.*this row's base is gemma-3-270m"):
        check_adapter_base(f"model=gemma-3-270m,peft={folder}")
    plain = tmp_path / "plain"  # an adapter made elsewhere: adapter_config.json names its base
    plain.mkdir()
    (plain / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "org/base"}))
    (plain / "adapter_model.safetensors").write_bytes(b"")
    check_adapter_base({"pretrained": "org/base", "peft": str(plain)})
    with pytest.raises(ValueError, match="trained on base org/base, but this row's base is org/other"):
        check_adapter_base({"pretrained": "org/other", "peft": str(plain)})


def test_the_rows_provenance_shows_base_and_recipe(tmp_path: Path) -> None:
    base = tmp_path / "smol"
    folder = adapter(tmp_path, base)
    record = adapter_provenance({"pretrained": str(base), "peft": str(folder), "dtype": "float32"})["adapter"]
    assert (record["base_model"], record["recipe"], record["round"], record["data_examples"]) == (
        str(base), "repair", "REPAIR-ed", 18)  # fmt: skip
    assert "device" not in record and "libraries" not in record  # published by allowlist
    assert adapter_provenance({"pretrained": str(base)}) == {}
    gone = adapter_provenance({"pretrained": str(base), "peft": str(tmp_path / "elsewhere")})["adapter"]
    assert gone["base_model"] is None and gone["recipe"] is None


@pytest.mark.parametrize("name", ["adapter_model.bin", "adapter_model.pt", "weights.PKL"])
def test_a_pickle_adapter_is_refused_before_anything_loads_it(tmp_path: Path, name: str) -> None:
    """Item 1 of issue 39: adapters are safetensors only; a .bin/pickle adapter is refused, naming file and folder."""
    base = tmp_path / "smol"
    folder = adapter(tmp_path, base)
    (folder / name).write_bytes(b"\x80\x04planted")  # never read: refused by its name
    with pytest.raises(ValueError) as caught:
        check_model_args(spec(f"pretrained={base},peft={folder}"))
    assert f"adapter {folder}: {name} is in pickle format, which can run code when loaded" in str(caught.value)
    (folder / name).unlink()
    (folder / "adapter_model.safetensors").unlink()
    with pytest.raises(ValueError, match=r"adapter .*: no \*\.safetensors weights"):
        check_adapter_base(f"pretrained={base},peft={folder}")
