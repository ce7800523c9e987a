"""Where the raw dataset files come from: a local directory or the pinned online sources.

If the environment variable ``LOGIC_CONSISTENCY_DATA`` is set (and not blank), it names a directory
laid out like the project's ``raw/`` data folder: one sub-folder per dataset (``summeval/``,
``noveleval/``, ``caters/``, ...) holding the upstream files under their upstream names. A relative
path is taken relative to the current working directory. Nothing is downloaded in that case, and a
missing file is an error (no silent fallback to the network, so that offline runs stay offline).

Otherwise files are fetched from pinned GitHub commits through ``datasets.DownloadManager`` (which
caches them in the Hugging Face cache), and hub datasets through ``datasets.load_dataset``.

The two network entry points, :func:`download` and :func:`load_hub_split`, are module-level
functions so that tests can replace them with ``monkeypatch``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import datasets

from logic_consistency.common import check_link_loop
from logic_consistency.harness_ext.task.data_files import note_read
from logic_consistency.outputs import OutputError, check_cache_folder

__all__ = [
    "check_hf_cache",
    "DATA_ENV_VAR",
    "download",
    "github_raw_url",
    "load_hub_split",
    "local_data_dir",
    "local_file",
    "not_downloaded",
    "resolve_files",
]

#: Environment variable naming the local data directory.
DATA_ENV_VAR = "LOGIC_CONSISTENCY_DATA"


def local_data_dir() -> Path | None:
    """The local data directory from ``LOGIC_CONSISTENCY_DATA``, or ``None`` to load online.

    A blank value counts as unset: an empty string would otherwise silently mean "the current
    directory".
    """
    value = os.environ.get(DATA_ENV_VAR, "")
    if not value.strip():
        return None
    # absolute() (not resolve()) keeps symlinks as the user wrote them; relative -> current directory.
    return Path(value).expanduser().absolute()


def local_file(root: Path, dataset: str, relpath: str) -> Path:
    """Path of ``<root>/<dataset>/<relpath>``, checked to exist.

    Raises:
        FileNotFoundError: The file is missing; the message names the full path and the variable.
    """
    path = root / dataset / relpath
    check_link_loop(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: file not found. Dataset files are read from the directory named by "
            f"{DATA_ENV_VAR}={os.environ.get(DATA_ENV_VAR, '')!r}, which must hold '{dataset}/{relpath}' "
            f"(same layout and file names as upstream); unset {DATA_ENV_VAR} to download the data instead."
        )
    note_read(root, path)  # hashed into the task's settings: changed data starts a new board
    return path


def github_raw_url(repo: str, commit: str, folder: str) -> str:
    """Base URL of ``folder`` in ``repo`` at a pinned ``commit`` on raw.githubusercontent.com."""
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{folder.strip('/')}"


def download(urls: Mapping[str, str]) -> dict[str, Path]:
    """Download (or reuse from the Hugging Face cache) every URL of ``urls``.

    Args:
        urls: Key -> URL.

    Returns:
        Key -> local path of the cached file.
    """
    check_hf_cache()
    manager = datasets.DownloadManager(dataset_name="logic_consistency")
    paths = manager.download(dict(urls))
    return {key: Path(path) for key, path in paths.items()}


def resolve_files(dataset: str, relpaths: Sequence[str], base_url: str) -> dict[str, Path]:
    """Local paths of the files ``relpaths`` of one dataset, local directory first.

    Args:
        dataset: Sub-folder name in the local data directory (``"noveleval"``, ``"caters"``, ...).
        relpaths: File paths relative to that folder, which are also relative to ``base_url``.
        base_url: Online folder (pinned commit) used when ``LOGIC_CONSISTENCY_DATA`` is not set.

    Returns:
        Relative path -> local path.
    """
    root = local_data_dir()
    if root is not None:
        return {relpath: local_file(root, dataset, relpath) for relpath in relpaths}
    try:
        return download({relpath: f"{base_url.rstrip('/')}/{relpath}" for relpath in relpaths})
    except OutputError:  # the datasets cache cannot be written: its own message names it
        raise
    except OSError as error:  # ConnectionError, or FileNotFoundError whose message is the bare URL
        raise not_downloaded(f"dataset {dataset!r} (from {base_url})", error) from error


def load_hub_split(path: str, split: str, revision: str | None = None, *, name: str | None = None) -> datasets.Dataset:
    """Load one split of a Hugging Face hub dataset (network or the ``datasets`` cache); ``name``: its config."""
    check_hf_cache()
    try:
        return datasets.load_dataset(path, name, split=split, revision=revision)
    except OutputError:
        raise
    except OSError as error:  # datasets' ConnectionError ("Couldn't reach 'mteb/summeval' on the Hub")
        raise not_downloaded(f"hub dataset {path!r} split {split!r}", error) from error


def not_downloaded(what: str, error: BaseException) -> ConnectionError:
    """The error of a dataset that could not be downloaded: what, why, and the local copy to use instead."""
    reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return ConnectionError(
        f"{what} could not be downloaded ({type(error).__name__}: {reason}); without the network, set "
        f"{DATA_ENV_VAR} to a local copy of the data (docs/data.md)"
    )


def check_hf_cache() -> None:
    """Raise :class:`OutputError` naming the ``datasets`` cache and the variables to set if it cannot be written.

    ``datasets`` writes downloads and lock files there, under ``~/.cache/huggingface`` unless
    ``HF_HOME`` or ``HF_DATASETS_CACHE`` say otherwise; a read-only or absent HOME otherwise ends
    in a bare ``FileNotFoundError``/``PermissionError`` traceback deep inside ``datasets``.
    """
    check_cache_folder(
        datasets.config.HF_DATASETS_CACHE,
        what="Hugging Face datasets cache",
        fix=f"set HF_HOME (or HF_DATASETS_CACHE) to a writable folder, or {DATA_ENV_VAR} to a local copy of the data",
    )
