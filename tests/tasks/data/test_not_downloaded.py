"""With no local data folder and no network, a dataset that cannot be downloaded is named, with
``LOGIC_CONSISTENCY_DATA`` and docs/data.md as the way out (not a bare URL)."""

from __future__ import annotations

from typing import Any

import datasets
import pytest
from huggingface_hub.errors import OfflineModeIsEnabled

from logic_consistency.tasks.data import DATA_ENV_VAR, noveleval, summarize_feedback, summeval, triviaqa


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """No local data folder; every download fails as it does without a network."""
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)

    def unreachable_file(self: Any, urls: dict[str, str]) -> Any:
        raise FileNotFoundError(next(iter(urls.values())))  # what datasets raises: the bare URL

    def unreachable_hub(path: str, *args: Any, **kwargs: Any) -> Any:
        raise ConnectionError(f"Couldn't reach {path!r} on the Hub (LocalEntryNotFoundError)")

    monkeypatch.setattr(datasets.DownloadManager, "download", unreachable_file)
    monkeypatch.setattr(datasets, "load_dataset", unreachable_hub)


def _check(error: pytest.ExceptionInfo[ConnectionError], *names: str) -> None:
    message = str(error.value)
    for part in (*names, "could not be downloaded", DATA_ENV_VAR, "docs/data.md"):
        assert part in message, (part, message)
    assert "\n" not in message


def test_a_github_file_that_cannot_be_downloaded_is_named(no_network: None) -> None:
    with pytest.raises(ConnectionError) as error:
        noveleval.load()
    _check(error, "'noveleval'", "https://raw.githubusercontent.com/", "queries.tsv")


@pytest.mark.parametrize(
    "load, hub",
    [
        (summeval.load, "mteb/summeval"),
        (triviaqa.load, "trivia_qa"),
        (lambda: summarize_feedback.load_comparisons("validation"), summarize_feedback.HUB_PATH),
    ],
    ids=["summeval", "triviaqa", "summarize_feedback"],
)
def test_a_hub_dataset_that_cannot_be_downloaded_is_named(no_network: None, load: Any, hub: str) -> None:
    with pytest.raises(ConnectionError) as error:
        load()
    _check(error, hub)


def test_offline_mode_is_named_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)

    def offline(self: Any, urls: dict[str, str]) -> Any:
        raise OfflineModeIsEnabled(f"Offline mode is enabled. Tried to reach {next(iter(urls.values()))}")

    monkeypatch.setattr(datasets.DownloadManager, "download", offline)
    with pytest.raises(ConnectionError) as error:
        noveleval.load()
    _check(error, "'noveleval'", "Offline mode is enabled")
