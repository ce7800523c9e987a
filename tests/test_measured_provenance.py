"""Provenance that is measured (issue 39, item 6): the device a run used comes from the loaded model,
not from ``--device``; a local path is published as a hash and its basename, never a home folder; a
task's ``config_source`` is made relative to the package or left out."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from logic_consistency.harness_ext.models.provenance import adapter_provenance
from logic_consistency.harness_ext.publish.allowlist import public_model_args, public_path
from logic_consistency.harness_ext.publish.run import publishing
from logic_consistency.harness_ext.task.current_run import publish_lm, record_device, recording_device

PACKAGE = Path(__file__).resolve().parents[1]
HOME_MODEL = "/home/alice/models/Qwen2.5-0.5B"
LOCAL = re.compile(r"^local:[0-9a-f]{12}/(?P<name>[^/]+)$")


@pytest.mark.parametrize("path", [HOME_MODEL, "~/models/Qwen2.5-0.5B", "./Qwen2.5-0.5B", "C:\\models\\m"])
def test_a_local_path_is_published_as_a_hash_and_its_basename(path: str) -> None:
    shown = public_path(path)
    match = LOCAL.match(shown)
    assert match is not None, shown
    assert "alice" not in shown and "home" not in shown
    assert public_path(path) == shown  # stable: one path, one name


def test_a_hub_id_is_published_as_it_is() -> None:
    assert public_path("Qwen/Qwen2.5-0.5B") == "Qwen/Qwen2.5-0.5B"
    assert public_model_args("hf", "pretrained=Qwen/Qwen2.5-0.5B,dtype=float32").value == (
        "pretrained=Qwen/Qwen2.5-0.5B,dtype=float32"
    )


def test_model_arguments_and_an_adapter_publish_no_home_folder(tmp_path: Path) -> None:
    shown = public_model_args("hf", {"pretrained": HOME_MODEL, "peft": str(tmp_path / "adapter"), "dtype": "float32"})
    assert LOCAL.match(shown.value["pretrained"]) and LOCAL.match(shown.value["peft"])
    assert "alice" not in str(shown.value) and str(tmp_path) not in str(shown.value)
    record = adapter_provenance({"pretrained": HOME_MODEL, "peft": str(tmp_path / "gone")}, shown_path=public_path)[
        "adapter"
    ]
    assert LOCAL.match(record["path"]) and str(tmp_path) not in str(record)


class _Weights:
    device = "cpu"


@pytest.mark.parametrize(
    ("lm", "device"),
    [
        (SimpleNamespace(model=_Weights()), "cpu"),
        (SimpleNamespace(lm=SimpleNamespace(model=_Weights())), "cpu"),  # lm-eval's CachingLM around it
        (SimpleNamespace(model="gpt-4o-mini"), None),  # an API model: no device
        (object(), None),
    ],
)
def test_the_device_comes_from_the_loaded_weights(lm: Any, device: str | None) -> None:
    with recording_device() as record:
        record_device(lm)
    assert record.device == device
    record_device(lm)  # outside a run: nothing is recorded, nor left for the next run
    with recording_device() as fresh:
        assert fresh.device is None


def test_a_direct_run_records_the_measured_device_and_no_home_folder(tmp_path: Path) -> None:
    """``--device cuda:0`` on a machine whose model loaded on the CPU: the results say ``cpu``."""
    inside = str(PACKAGE / "tasks" / "pairwise" / "caters.yaml")
    outside = str(tmp_path / "my_tasks" / "task.yaml")

    def evaluate(lm: Any, task_dict: Any) -> dict[str, Any]:
        return {}

    def simple_evaluate(model: str, model_args: str = "", device: str | None = None) -> dict[str, Any]:
        publish_lm(evaluate)(lm=SimpleNamespace(model=_Weights()), task_dict={})
        return {
            "config": {"model": model, "model_args": model_args, "device": device},
            "configs": {
                "a": {"metadata": {"config_source": inside, "pretrained": HOME_MODEL}},
                "b": {"metadata": {"config_source": outside}},
            },
        }

    results = publishing(simple_evaluate)(model="hf", model_args=f"pretrained={HOME_MODEL}", device="cuda:0")
    assert results["config"]["device"] == "cpu"
    assert LOCAL.match(results["config"]["model_args"].removeprefix("pretrained="))
    assert results["configs"]["a"]["metadata"] == {
        "config_source": "logic_consistency/tasks/pairwise/caters.yaml",
        "pretrained": public_path(HOME_MODEL),
    }
    assert "config_source" not in results["configs"]["b"]["metadata"]
    assert "alice" not in str(results) and str(tmp_path) not in str(results)
