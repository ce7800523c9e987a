"""The ``lc-embedded`` model's argument handling (no model is loaded here) and its conversion (slow)."""

from __future__ import annotations

import concurrent.futures
import contextlib
import time
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.harness_ext.models import embedded as models
from logic_consistency.harness_ext.prefix.embedded import EmbeddedHFLM


class _Captured(EmbeddedHFLM):
    """Records the constructor's keyword arguments instead of loading a model."""

    def __init__(self, **kwargs: Any) -> None:  # noqa: D107 - test double
        self.kwargs = kwargs


def test_model_args_win_over_command_line_flags() -> None:
    built = _Captured.create_from_arg_string(
        "model=gemma-3-270m,batch_size=8", {"batch_size": 1, "max_batch_size": None, "device": "cpu"}
    )
    assert built.kwargs == {"model": "gemma-3-270m", "batch_size": 8, "device": "cpu"}


def test_command_line_flags_fill_what_model_args_leave_out() -> None:
    built = _Captured.create_from_arg_obj({"model": "smollm2-135m-instruct"}, {"batch_size": 4, "device": None})
    assert built.kwargs == {"model": "smollm2-135m-instruct", "batch_size": 4}


def test_unknown_model_name_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="not an embedded model"):
        models.resolve("gpt-5")


@pytest.mark.slow
def test_one_parse_of_the_gguf_converts_byte_for_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The conversion's memo of transformers' GGUF parsing changes no byte of the converted model, and
    leaves ``gguf`` as it found it."""
    import gguf

    reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    model = models.EMBEDDED_MODELS["smollm2-135m-instruct"]
    memo, plain = tmp_path / "memo", tmp_path / "plain"
    memo.mkdir()
    plain.mkdir()
    models._convert(model, memo)
    assert (gguf.GGUFReader, gguf.get_tensor_name_map) == (reader, name_map)
    monkeypatch.setattr(models, "_one_gguf_parse", contextlib.nullcontext)
    models._convert(model, plain)
    names = sorted(path.name for path in plain.iterdir())
    assert names == sorted(path.name for path in memo.iterdir()) and "model.safetensors" in names
    for name in names:
        assert (memo / name).read_bytes() == (plain / name).read_bytes(), name


def test_two_processes_converting_one_model_convert_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The quick start converts ahead of its lm_eval: the second to ask waits for the first's folder
    (a lock per model) instead of converting again. Two threads open the lock separately, as two
    processes do."""
    calls: list[Path] = []

    def convert(model: models.EmbeddedModel, out_dir: Path) -> None:
        calls.append(out_dir)
        time.sleep(0.5)
        (out_dir / models.MANIFEST).write_text("{}", encoding="utf-8")

    monkeypatch.setattr(models, "_convert", convert)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        found = list(pool.map(lambda _: models.resolve("smollm2-135m-instruct", cache_dir=tmp_path), range(2)))
    assert len(calls) == 1 and found[0] == found[1] and (found[0] / models.MANIFEST).is_file()
    assert not (tmp_path / ".smollm2-135m-instruct.lock").is_symlink()
