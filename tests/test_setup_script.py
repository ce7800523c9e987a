"""scripts/setup.sh installs what its caller runs: the quick start no extra, the tests the test extra."""

from __future__ import annotations

import os
import re
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_setup_refuses_an_unknown_extra_before_installing_anything(tmp_path: Path) -> None:
    # a copy of the script in an empty tree: were the extra accepted, it would create tmp/.venv
    (tmp_path / "scripts").mkdir()
    script = tmp_path / "scripts" / "setup.sh"
    script.write_text((ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8"), encoding="utf-8")
    result = children.run(["bash", str(script), "tests"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "unknown extra 'tests' (choose from: api, ray, train, test;" in result.stderr
    assert not (tmp_path / ".venv").exists()


def test_setup_takes_every_extra_of_setup_cfg() -> None:
    """The extras the docs name (``bash scripts/setup.sh train``) are setup.cfg's, and setup.sh takes each."""
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    declared = set(config["options.extras_require"])
    found = re.search(r'^extras="([^"]*)"$', (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8"), re.MULTILINE)
    assert found is not None and set(found.group(1).split()) == declared == {"api", "ray", "train", "test"}


@pytest.mark.parametrize(
    ("models", "message"),
    [
        ("smollm2-135m-instruct gemma3", "unknown model 'gemma3' (choose smollm2-135m-instruct or gemma-3-270m)"),
        (" ", "LOGIC_CONSISTENCY_SETUP_MODELS names no model"),
    ],
)
def test_setup_refuses_an_unknown_model_before_installing_anything(tmp_path: Path, models: str, message: str) -> None:
    (tmp_path / "scripts").mkdir()
    script = tmp_path / "scripts" / "setup.sh"
    script.write_text((ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8"), encoding="utf-8")
    env = {**os.environ, "LOGIC_CONSISTENCY_SETUP_MODELS": models}
    result = children.run(["bash", str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2
    assert message in result.stderr
    assert not (tmp_path / ".venv").exists()


def test_setup_refuses_an_unknown_installer_before_installing_anything(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    script = tmp_path / "scripts" / "setup.sh"
    script.write_text((ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8"), encoding="utf-8")
    env = {**os.environ, "LOGIC_CONSISTENCY_INSTALLER": "conda"}
    result = children.run(["bash", str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2
    assert "LOGIC_CONSISTENCY_INSTALLER='conda' (choose uv or pip)" in result.stderr
    assert not (tmp_path / ".venv").exists()


def test_the_quick_start_installs_no_extra_and_the_tests_the_test_extra() -> None:
    def setup_lines(name: str) -> list[str]:
        text = (ROOT / "scripts" / name).read_text(encoding="utf-8")
        return [line.strip() for line in text.splitlines() if line.strip().startswith("bash scripts/setup.sh")]

    assert setup_lines("quickstart.sh") == ["bash scripts/setup.sh"]
    assert setup_lines("test.sh") == ["bash scripts/setup.sh test"]


def test_the_test_servers_llama_cpp_is_built_for_a_portable_cpu_target() -> None:
    # A native build uses every instruction set the CPU advertises; on VMs that advertise AMX but
    # trap it the server dies at its first completion (scripts/build_llama_cpp.sh says why).
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is installed by scripts/setup.sh test")
    info = llama_cpp.llama_print_system_info().decode()
    features = dict(re.findall(r"(\w+) = (\d)", info))
    assert features, f"llama.cpp's system info lists no features: {info!r}"
    enabled = sorted(name for name, on in features.items() if on == "1" and name.startswith(("AMX", "AVX512")))
    assert not enabled, f"llama.cpp was built with {enabled}: rebuild it with scripts/build_llama_cpp.sh"


def test_every_package_folder_is_listed_in_setup_cfg() -> None:
    # a folder left out ships nowhere: the wheel's `logic-consistency` then fails to import it
    # (scripts/wheel_smoke.sh found harness_ext/training missing this way)
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    listed = set(config["options"]["packages"].split())
    skipped = {"tests", "scripts", "docs", "build", "dist"}
    folders = {
        ".".join(["logic_consistency", *init.parent.relative_to(ROOT).parts])
        for init in ROOT.rglob("__init__.py")
        if not ({*init.relative_to(ROOT).parts[:1]} & skipped) and not any(p.startswith(".") for p in init.parts)
    }
    assert folders - listed == set(), f"package folders missing from setup.cfg [options] packages: {folders - listed}"
