"""A tuned model as a leaderboard row: ``peft=ADAPTER`` whose base is not the row's is refused before any
run (naming both), through the leaderboard's preflight; the row's provenance shows the base and recipe."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from logic_consistency.harness_ext.models.adapter_manifest import read_manifest, write_manifest
from logic_consistency.harness_ext.models.provenance import adapter_provenance, check_adapter_base
from logic_consistency.harness_ext.publish.allowlist import public_path
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
    record = adapter_provenance(
        {"pretrained": str(base), "peft": str(folder), "dtype": "float32"}, shown_path=public_path
    )["adapter"]
    assert (record["base_model"], record["recipe"], record["round"], record["data_examples"]) == (
        public_path(str(base)), "repair", "REPAIR-ed", 18)  # fmt: skip
    assert str(tmp_path) not in str(record)  # issue 39: a local path as a hash and its basename
    assert "device" not in record and "libraries" not in record  # published by allowlist
    assert adapter_provenance({"pretrained": str(base)}, shown_path=public_path) == {}
    gone = adapter_provenance({"pretrained": str(base), "peft": str(tmp_path / "elsewhere")}, shown_path=public_path)[
        "adapter"
    ]
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


def _plain(tmp_path: Path, config: dict[str, object], name: str = "plain") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "adapter_config.json").write_text(json.dumps(config))
    (folder / "adapter_model.safetensors").write_bytes(b"")
    return folder


@pytest.mark.parametrize(
    ("trained_on", "row"),
    [
        ("/models/Qwen2.5-0.5B-Instruct", "pretrained=Qwen2.5-0.5B"),  # a prefix is not the same base
        ("Qwen/Qwen2.5-0.5B-Instruct", "pretrained=Qwen/Qwen2.5-0.5B"),
        ("/cache/smollm2-135m-instruct-0.0.9-1234", "model=smollm2-135m-instruct"),  # another conversion
        ("/cache/smollm2-135m-instruct-extra-0.1.2-98362432", "model=smollm2-135m-instruct"),
    ],
)
def test_an_adapter_base_is_matched_exactly_never_by_prefix(tmp_path: Path, trained_on: str, row: str) -> None:
    """Issue 39 item 4: an adapter for Qwen2.5-0.5B-Instruct was accepted on Qwen2.5-0.5B (a prefix match)."""
    folder = _plain(tmp_path, {"base_model_name_or_path": trained_on})
    with pytest.raises(ValueError, match=f"trained on base {re.escape(trained_on)}, but this row's base is"):
        check_adapter_base(f"{row},peft={folder}")


def test_a_hub_base_is_matched_by_id_and_the_revision_the_adapter_records(tmp_path: Path) -> None:
    folder = _plain(tmp_path, {"base_model_name_or_path": "org/base", "revision": "abc123"})
    check_adapter_base(f"pretrained=org/base,revision=abc123,peft={folder}")
    check_adapter_base(f"pretrained=org/base,peft={folder}")  # the row names no revision: the id decides
    with pytest.raises(ValueError, match="trained on base org/base, but this row's base is org/base"):
        check_adapter_base(f"pretrained=org/base,revision=def456,peft={folder}")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("logic_consistency_adapter.json", "{not json"),
        ("logic_consistency_adapter.json", "[1, 2]"),
        ("logic_consistency_adapter.json", '{"recipe": "repair"}'),
        ("adapter_config.json", '{"base_model_name_or_path": 3}'),
    ],
)
def test_a_malformed_manifest_names_its_file(tmp_path: Path, name: str, text: str) -> None:
    folder = tmp_path / "adapter"
    folder.mkdir()
    (folder / "adapter_model.safetensors").write_bytes(b"")
    (folder / name).write_text(text)
    with pytest.raises(ValueError, match=f"^{re.escape(str(folder / name))}: malformed adapter file"):
        check_adapter_base(f"pretrained=org/base,peft={folder}")
    assert (
        adapter_provenance(f"pretrained=org/base,peft={folder}", shown_path=public_path)["adapter"]["base_model"]
        is None
    )
    if text in ("{not json", "[1, 2]"):  # the trainer's and the merge's reader too
        with pytest.raises(ValueError, match=f"^{re.escape(str(folder / name))}: malformed adapter manifest"):
            read_manifest(folder)
