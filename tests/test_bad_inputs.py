"""One table of bad inputs and faults, each asserting that the error names what is wrong.

Every case builds its own bad input in ``tmp_path`` (hand-written fixtures from ``tests/fixtures``,
copied and then broken), calls the public function or command a user would, and checks that the
exception message names the file, field, option, argument or signal at fault. No model is loaded.
"""

from __future__ import annotations

import copy
import json
import math
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import logic_consistency.metrics as m
from logic_consistency.cli import build_parser
from logic_consistency.harness_ext.base import PromptedTask
from logic_consistency.leaderboard.merge import make_document
from logic_consistency.leaderboard.nightly import build
from logic_consistency.leaderboard.schema import load_document, validate
from logic_consistency.options import check_bool, check_choice, check_int, check_seed, reject_unknown
from logic_consistency.tasks.pairwise.options import PairwiseOptions

FIXTURE_DATA = Path(__file__).resolve().parent / "fixtures" / "data"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import hand_row  # noqa: E402


@dataclass(frozen=True)
class Case:
    """``run(tmp_path)`` must raise ``error`` with every string of ``expect`` in its message."""

    name: str
    run: Callable[[Path], Any]
    expect: tuple[str, ...]
    error: type[BaseException] = Exception


CASES: list[Case] = []


def case(name: str, expect: str | tuple[str, ...], error: type[BaseException] = Exception) -> Callable[..., Any]:
    def register(function: Callable[[Path], Any]) -> Callable[[Path], Any]:
        CASES.append(Case(name, function, (expect,) if isinstance(expect, str) else expect, error))
        return function

    return register


def add(name: str, run: Callable[[Path], Any], *expect: str, error: type[BaseException] = Exception) -> None:
    CASES.append(Case(name, run, expect, error))


# ------------------------------------------------------------------------------------ datasets
def _data(tmp: Path) -> Path:
    """A private copy of the fixture data, named by LOGIC_CONSISTENCY_DATA for the case."""
    root = tmp / "data"
    if not root.exists():
        shutil.copytree(FIXTURE_DATA, root)
    return root


def _loader(dataset: str) -> Callable[[], Any]:
    import importlib

    if dataset == "summarize_feedback":
        module = importlib.import_module("logic_consistency.tasks.data.summarize_feedback")
        return lambda: module.load_comparisons("validation")
    module = importlib.import_module(f"logic_consistency.tasks.data.{dataset}")
    return module.load


#: (dataset loader, file under the data folder, header line kept by "header only" or None).
DATA_FILES = [
    ("advbench", "advbench/harmful_behaviors.csv", True),
    ("summeval", "summeval/summeval_hub_format.jsonl", False),
    ("delta_causal", "delta_causal/shuffled_test_extended.csv", True),
    ("triviaqa", "triviaqa/triviaqa.json", False),
    ("summarize_feedback", "summarize_from_feedback/comparisons_validation.jsonl", False),
    ("noveleval", "noveleval/queries.tsv", False),
    ("noveleval", "noveleval/corpus.tsv", False),
    ("noveleval", "noveleval/qrels.txt", False),
    ("caters", "caters/caters_test/test/test_15Oct.ann", False),
    ("caters", "caters/caters_evaluation/train/batch_1.txt", False),
]


def _corrupt(dataset: str, relative: str, how: str) -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        root = _data(tmp)
        target = root / relative
        text = target.read_text(encoding="utf-8")
        if how == "missing":
            target.unlink()
        elif how == "empty":
            target.write_text("", encoding="utf-8")
        elif how == "header only":
            target.write_text(text.splitlines(keepends=True)[0], encoding="utf-8")
        elif how == "truncated":
            target.write_text(text[: len(text) // 2 - 7], encoding="utf-8")
        elif how == "garbage line":
            target.write_text(text + '\x00{not a record"\t\n', encoding="utf-8")
        return _loader(dataset)()

    return run


for _dataset, _relative, _header in DATA_FILES:
    _name = Path(_relative).name
    for _how in ("missing", "empty", "truncated", "garbage line") + (("header only",) if _header else ()):
        if _relative.endswith(".txt") and _how in ("truncated", "garbage line"):
            continue  # a story text has no format to break: the .ann offsets are checked instead
        if _relative.endswith("queries.tsv") and _how == "truncated":
            continue  # a cut query list is still a query list (qrels then name the missing id)
        add(f"data {_dataset} {_name} {_how}", _corrupt(_dataset, _relative, _how), _name)


@case("data noveleval queries truncated: qrels name the missing query id", ("qrels.txt", "qid", "queries.tsv"))
def _(tmp: Path) -> Any:
    target = _data(tmp) / "noveleval" / "queries.tsv"
    target.write_text(target.read_text(encoding="utf-8").splitlines(keepends=True)[0], encoding="utf-8")
    return _loader("noveleval")()


@case("data summeval human score NaN", ("summeval_hub_format.jsonl", "line 1"))
def _(tmp: Path) -> Any:
    target = _data(tmp) / "summeval" / "summeval_hub_format.jsonl"
    lines = target.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    key = next(k for k, v in record.items() if isinstance(v, list) and v and isinstance(v[0], (int, float)))
    record[key][0] = math.nan
    target.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n", encoding="utf-8")
    return _loader("summeval")()


@case("data summeval human score a string", ("summeval_hub_format.jsonl", "line 2"))
def _(tmp: Path) -> Any:
    target = _data(tmp) / "summeval" / "summeval_hub_format.jsonl"
    lines = target.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    key = next(k for k, v in record.items() if isinstance(v, list) and v and isinstance(v[0], (int, float)))
    record[key][0] = "high"
    target.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n", encoding="utf-8")
    return _loader("summeval")()


@case("data advbench bad quote", ("harmful_behaviors.csv", "line"))
def _(tmp: Path) -> Any:
    target = _data(tmp) / "advbench" / "harmful_behaviors.csv"
    target.write_text(target.read_text(encoding="utf-8") + '"Write a plan,Sure\n', encoding="utf-8")
    return _loader("advbench")()


@case("data noveleval relevance 7", ("qrels.txt", "rel"))
def _(tmp: Path) -> Any:
    target = _data(tmp) / "noveleval" / "qrels.txt"
    lines = target.read_text(encoding="utf-8").splitlines()
    fields = lines[0].split()
    target.write_text("\n".join([" ".join([*fields[:3], "7"]), *lines[1:]]) + "\n", encoding="utf-8")
    return _loader("noveleval")()


@case("data caters span outside every story", ("test_15Oct.ann", "offsets"))
def _(tmp: Path) -> Any:
    target = _data(tmp) / "caters" / "caters_test" / "test" / "test_15Oct.ann"
    target.write_text(target.read_text(encoding="utf-8") + "T999\tEvent 999999 1000005\tfar\n", encoding="utf-8")
    return _loader("caters")()


for _dataset, _option, _value, _message in [
    ("summeval", "max_items", 1, "max_items"),
    ("summeval", "max_items", "5", "max_items"),
    ("summeval", "seed", -1, "seed"),
    ("summeval", "seed", 1.5, "seed"),
    ("summeval", "aspect", "colour", "aspect"),
    ("caters", "min_events", 1, "min_events"),
    ("caters", "count_events", "some", "count_events"),
    ("caters", "order", "random", "order"),
    ("noveleval", "max_items", True, "max_items"),
    ("delta_causal", "split", "dev", "split"),
    ("delta_causal", "seed", "7", "seed"),
]:

    def _run(tmp: Path, dataset: str = _dataset, option: str = _option, value: Any = _value) -> Any:
        _data(tmp)
        return _loader(dataset)(**{option: value})

    add(f"option {_dataset} {_option}={_value!r}", _run, _message)


# ------------------------------------------------------------------------------------ task options
PROMPTS = {
    "prompts": {"normal": "{{context}}", "negated": "not {{context}}"},
    "answer_instructions": {"direct": "Answer A or B."},
}

for _metadata, _message in [
    ({"ks": 3}, "metadata.ks"),
    ({"ks": [2]}, "metadata.ks"),
    ({"ks": []}, "metadata.ks"),
    ({"ks": "35"}, "metadata.ks"),
    ({"ks": [3, True]}, "metadata.ks"),
    ({"calibrated": "false"}, "metadata.calibrated"),
    ({"calibrated": 1}, "metadata.calibrated"),
    ({"seed": -3}, "metadata.seed"),
    ({"seed": "1"}, "metadata.seed"),
    ({"max_items": 2}, "metadata.max_items"),
    ({"max_items": "10"}, "metadata.max_items"),
    ({"transitivity_samples": 0}, "metadata.transitivity_samples"),
    ({"transitivity_samples": "many"}, "metadata.transitivity_samples"),
    ({"pairs_runs": -1}, "metadata.pairs_runs"),
    ({"pairs_runs": True}, "metadata.pairs_runs"),
    ({"max_itemz": 5}, "'max_items'"),
    ({"calibrate": True}, "'calibrated'"),
    ({"seeds": 1}, "'seed'"),
    ({"pairs_method": "beem"}, "metadata.pairs_method"),
    ({"pairs_metod": "beam"}, "'pairs_method'"),
    ({"pairs_beam_size": 5}, "metadata.pairs_beam_size applies to pairs_method 'beam' only"),
    ({"pairs_method": "beam", "pairs_beam_size": 0}, "metadata.pairs_beam_size"),
    ({"pairs_method": "beam", "pairs_beam_size": 2.5}, "metadata.pairs_beam_size"),
    ({"pairs_method": "beam", "pairs_prob_gap": 0.7}, "metadata.pairs_prob_gap"),
    ({"pairs_method": "beam", "pairs_prob_gap": "0.1"}, "metadata.pairs_prob_gap"),
]:
    add(
        f"task metadata {_metadata}",
        lambda tmp, md=_metadata: PairwiseOptions.from_config(PROMPTS, md, task="t"),
        "task 't'",
        _message,
    )

for _prompt_config, _message in [
    ({**PROMPTS, "prompts": {"normal": "{{ unclosed"}}, "prompts.normal"),
    ({**PROMPTS, "prompts": {"normal": "x", "negatd": "y"}}, "negatd"),
    ({**PROMPTS, "prompts": "just a string"}, "prompts"),
    ({**PROMPTS, "prompt_style": "cot"}, "answer_instructions.cot"),
    ({**PROMPTS, "choices": ["A"]}, "choices"),
    ({**PROMPTS, "template_id": 3, "paraphrases": [PROMPTS["prompts"]]}, "template_id"),
]:
    add(
        f"task prompts {sorted(_prompt_config)} {_message}",
        lambda tmp, pc=_prompt_config: PairwiseOptions.from_config(pc, {}, task="t"),
        "task 't'",
        _message,
    )

for _limit in (0, -1, -480):
    add(
        f"--limit {_limit}",
        lambda tmp, limit=_limit: PromptedTask.remember_formatting(
            SimpleNamespace(config=SimpleNamespace(task="logic_consistency_summeval")), {"limit": limit}
        ),  # type: ignore[arg-type]
        "--limit",
        "logic_consistency_summeval",
    )

add(
    "options unknown key suggests the closest",
    lambda tmp: reject_unknown(["max_itemz"], ["max_items", "seed"], where="--metadata"),
    "max_itemz",
    "'max_items'",
    "--metadata",
)
add("options int given a bool", lambda tmp: check_int(True, name="n_docs"), "n_docs")
add("options int below minimum", lambda tmp: check_int(0, name="n_docs", minimum=1), "n_docs", "at least 1")
add("options seed negative", lambda tmp: check_seed(-1), "seed")
add("options bool given 'yes'", lambda tmp: check_bool("yes", name="calibrated"), "calibrated")
add(
    "options choice typo",
    lambda tmp: check_choice("coherance", ["coherence", "fluency"], name="aspect"),
    "aspect",
    "'coherence'",
)


# ------------------------------------------------------------------------------------ metric API
P = np.array([[0.5, 1.0, 1.0], [0.0, 0.5, 1.0], [0.0, 0.0, 0.5]])
W = np.triu(np.ones((4, 4), dtype=bool), 1)
PERFECT = [-5, -4, -3, -2, -1, 1, 2, 3, 4, 5]
METRIC_ABUSE: list[tuple[str, Callable[[], Any], str]] = [
    ("bootstrap_ci confidence 1.5", lambda: m.bootstrap_ci([1, 2, 3], confidence=1.5), "confidence"),
    ("bootstrap_ci n_resamples 0", lambda: m.bootstrap_ci([1, 2, 3], n_resamples=0), "n_resamples"),
    ("bootstrap_ci empty", lambda: m.bootstrap_ci([]), "values"),
    ("bootstrap_ci NaN", lambda: m.bootstrap_ci([1.0, math.nan]), "NaN"),
    ("bootstrap_ci seed -1", lambda: m.bootstrap_ci([1, 2, 3], seed=-1), "seed"),
    ("causal_consistency 3 labels", lambda: m.causal_consistency([1, 2, 3]), "ranked_labels"),
    ("causal_consistency duplicate", lambda: m.causal_consistency([*PERFECT[:-1], 4]), "duplicate"),
    ("causal_consistency a string", lambda: m.causal_consistency("abc"), "ranked_labels"),  # type: ignore[arg-type]
    ("commutativity 1-D", lambda: m.commutativity([0.5, 1.0]), "prefs"),
    ("commutativity not square", lambda: m.commutativity(np.zeros((2, 3))), "square"),
    ("commutativity out of [0, 1]", lambda: m.commutativity(P * 3), "prefs"),
    ("commutativity NaN", lambda: m.commutativity(np.array([[0.5, np.nan], [0.5, 0.5]])), "nan_policy"),
    ("commutativity nan_policy", lambda: m.commutativity(P, nan_policy="ignore"), "nan_policy"),  # type: ignore[arg-type]
    ("commutativity 1 item", lambda: m.commutativity(np.array([[0.5]])), "at least 2 items"),
    ("confusion_matrix bad ranking", lambda: m.confusion_matrix([[1, 2]]), "rankings[0]"),
    ("confusion_matrix a string", lambda: m.confusion_matrix("ab"), "rankings"),  # type: ignore[arg-type]
    ("confusion_matrix no rankings", lambda: m.confusion_matrix([], normalize=True), "rankings is empty"),
    ("has_cycle vertex out of range", lambda: m.has_cycle([[5]]), "adjacency[0]"),
    ("has_cycle a string", lambda: m.has_cycle("ab"), "adjacency[0]"),  # type: ignore[arg-type]
    ("human_agreement length", lambda: m.human_agreement(P, [1, 2]), "human_scores"),
    ("human_agreement NaN", lambda: m.human_agreement(P, [1, 2, math.nan]), "human_scores"),
    ("human_agreement ties", lambda: m.human_agreement(P, [1, 2, 3], ties="maybe"), "ties"),
    ("human_agreement all tied", lambda: m.human_agreement(P, [1, 1, 1]), "tied"),
    ("intra_group_clustering empty", lambda: m.intra_group_clustering([]), "polarities"),
    ("intra_group_clustering one group", lambda: m.intra_group_clustering(["a", "a"]), "polarities"),
    ("intra_group_clustering_density empty", lambda: m.intra_group_clustering_density([]), "polarities"),
    ("negation_invariance shape", lambda: m.negation_invariance(P, np.zeros((2, 2))), "neg_prefs"),
    ("negation_invariance range", lambda: m.negation_invariance(P, P * 2), "neg_prefs"),
    ("pairwise_consistency ks int", lambda: m.pairwise_consistency(P, ks=3), "ks"),  # type: ignore[arg-type]
    ("pairwise_consistency ks 2", lambda: m.pairwise_consistency(P, ks=[2]), "ks"),
    ("pairwise_consistency ks > N", lambda: m.pairwise_consistency(P, ks=[5]), "ks"),
    (
        "pairwise_consistency calibrated str",
        lambda: m.pairwise_consistency(P, ks=[3], calibrated="false"),  # type: ignore[arg-type]
        "calibrated",
    ),
    ("pairwise_consistency samples 0", lambda: m.pairwise_consistency(P, ks=[3], samples=0), "samples"),
    ("pairwise_consistency seed -1", lambda: m.pairwise_consistency(P, ks=[3], seed=-1), "seed"),
    ("pairwise_consistency seed 1.5", lambda: m.pairwise_consistency(P, ks=[3], seed=1.5), "seed"),  # type: ignore[arg-type]
    ("pairwise_consistency human length", lambda: m.pairwise_consistency(P, ks=[3], human_scores=[1]), "human_scores"),
    ("pairwise_consistency human_ties", lambda: m.pairwise_consistency(P, ks=[3], human_ties="x"), "ties"),
    ("relation_graph 3-D", lambda: m.relation_graph(np.zeros((2, 2, 2))), "prefs"),
    ("relation_graph text", lambda: m.relation_graph("x"), "prefs"),
    ("position_bias not square", lambda: m.position_bias(np.zeros((2, 3))), "square"),
    ("position_bias out of [0, 1]", lambda: m.position_bias(P * 3), "prefs"),
    ("p_first_mean NaN", lambda: m.p_first_mean(np.array([[0.5, np.nan], [0.5, 0.5]])), "nan_policy"),
    ("pairs_order method", lambda: m.pairs_order(P, method="beem"), "method"),  # type: ignore[arg-type]
    ("pairs_order beam_size 0", lambda: m.pairs_order(P, method="beam", beam_size=0), "beam_size"),
    ("pairs_order prob_gap 0.6", lambda: m.pairs_order(P, method="beam", prob_gap=0.6), "prob_gap"),
    ("pairs_order initial_order", lambda: m.pairs_order(P, initial_order=[0, 0, 1]), "initial_order"),
    ("pairs_order NaN asked", lambda: m.pairs_order(np.full((3, 3), np.nan)), "pair (1, 2)"),
    ("self_agreement 1-D", lambda: m.self_agreement([1.0, 0.0]), "samples"),
    ("self_agreement not 0/1", lambda: m.self_agreement([[0.7, 1.0]]), "samples"),
    ("majority_choice text", lambda: m.majority_choice([["A", "B"]]), "samples"),
    ("self_agreement of single samples", lambda: m.self_agreement([[1.0], [0.0]]), "2 parsed samples"),
    ("win_loss_rate index out of range", lambda: m.win_loss_rate([0, 3], [1, 2], 3), "winners"),
    ("win_loss_rate lengths", lambda: m.win_loss_rate([0, 1], [1], 3), "same length"),
    ("elo_ratings self-comparison", lambda: m.elo_ratings([1], [1], 3), "cannot beat itself"),
    ("bradley_terry n_items 0", lambda: m.bradley_terry([], [], 0), "n_items"),
    ("ranking_spearman lengths", lambda: m.ranking_spearman([1.0, 2.0, 3.0], [1.0, 2.0]), "human_scores"),
    ("correlation lengths", lambda: m.correlation([1.0, 2.0, 3.0], [1.0, 2.0]), "equal length"),
    ("spread NaN", lambda: m.spread([1.0, math.nan]), "finite"),
    ("transitivity k 2", lambda: m.transitivity(W, k=2), "k"),
    ("transitivity k > N", lambda: m.transitivity(W, k=5), "k"),
    ("transitivity samples 0", lambda: m.transitivity(W, k=3, samples=0), "samples"),
    ("transitivity probabilities", lambda: m.transitivity(np.full((3, 3), 0.7), k=3), "wins"),
    ("transitivity no edges", lambda: m.transitivity(np.zeros((3, 3), dtype=bool), k=3), "wins"),
    ("transitivity_by_cycle_search k 1", lambda: m.transitivity_by_cycle_search(W, k=1), "k"),
    (
        "transitivity_by_cycle_search not square",
        lambda: m.transitivity_by_cycle_search(np.zeros((3, 2), dtype=bool)),
        "square",
    ),
]
for _name, _call, _message in METRIC_ABUSE:
    add(f"metric {_name}", lambda tmp, call=_call: call(), _message)


# ------------------------------------------------------------------------------------ boards
def _board(tmp: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    document = make_document("leaderboard", [hand_row()], [], night="2026-01-01")
    validate(document)
    edit(document)
    path = tmp / "lb" / "leaderboard.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _metric(document: dict[str, Any], task: str, name: str) -> dict[str, Any]:
    return document["rows"][0]["tasks"][task]["metrics"][name]


BOARD_EDITS: list[tuple[str, Callable[[dict[str, Any]], None], tuple[str, ...]]] = [
    (
        "score 7.5",
        lambda d: _metric(d, "logic_consistency_summeval", "s_comm").update(score=7.5),
        ("s_comm", "logic_consistency_summeval", "maximum"),
    ),
    (
        "score NaN",
        lambda d: _metric(d, "logic_consistency_summeval", "s_tran_3").update(score=math.nan),
        ("s_tran_3", "NaN"),
    ),
    (
        "score Infinity",
        lambda d: _metric(d, "logic_consistency_causal", "cgp").update(score=math.inf),
        ("cgp", "NaN or infinite"),
    ),
    ("tau -2", lambda d: _metric(d, "logic_consistency_causal", "tau_all").update(score=-2), ("tau_all", "minimum")),
    ("ci95 reversed", lambda d: _metric(d, "logic_consistency_causal", "tau_all").update(ci95=[0.5, 0.1]), ("ci95",)),
    (
        "count negative",
        lambda d: d["rows"][0]["tasks"]["logic_consistency_causal"]["counts"]["unparseable_judgement"].update(total=-1),
        ("unparseable_judgement", "total"),
    ),
    ("score a string", lambda d: _metric(d, "logic_consistency_causal", "cgp").update(score="0.5"), ("cgp", "score")),
    ("missing rows", lambda d: d.pop("rows"), ("rows",)),
    ("settings edited", lambda d: d["rows"][0]["settings"].update(limit=99.0), ("settings_id",)),
    ("duplicate row", lambda d: d["rows"].append(copy.deepcopy(d["rows"][0])), ("row_id",)),
    ("schema version 3", lambda d: d.update(schema_version="3.0"), ("schema_version",)),
    ("model name empty", lambda d: d["rows"][0]["model"].update(name=""), ("model", "name")),
]
for _name, _edit, _expect in BOARD_EDITS:
    add(
        f"board validate: {_name}",
        lambda tmp, edit=_edit: load_document(_board(tmp, edit)),
        "leaderboard.json",
        *_expect,
    )


@case("board not JSON", ("leaderboard.json", "not valid JSON", "line 1"))
def _(tmp: Path) -> Any:
    path = tmp / "leaderboard.json"
    path.write_text('{"rows": [', encoding="utf-8")
    return load_document(path)


@case("board not UTF-8", ("leaderboard.json", "UTF-8"))
def _(tmp: Path) -> Any:
    path = tmp / "leaderboard.json"
    path.write_bytes(b"\xff\xfe{}")
    return load_document(path)


@case("board missing", "leaderboard.json", FileNotFoundError)
def _(tmp: Path) -> Any:
    return load_document(tmp / "leaderboard.json")


# ------------------------------------------------------------------------------------ commands
def _cli(*argv: str) -> Any:
    args = build_parser().parse_args(list(argv))
    return args.run(args)


@case("render over its own board", ("--out", "refusing to write over the input", "leaderboard.json"))
def _(tmp: Path) -> Any:
    board = _board(tmp, lambda d: None)
    return _cli("leaderboard", "render", str(board), "--out", str(board))


@case("render of a NaN board", ("leaderboard.json", "tau_all", "NaN"))
def _(tmp: Path) -> Any:
    board = _board(tmp, lambda d: _metric(d, "logic_consistency_causal", "tau_all").update(score=math.nan))
    return _cli("leaderboard", "render", str(board), "--out", str(tmp / "page.html"))


@case("render over a text file", ("--out", "notes.txt", "not JSON, HTML or PNG"))
def _(tmp: Path) -> Any:
    board = _board(tmp, lambda d: None)
    (tmp / "notes.txt").write_text("keep me")
    return _cli("leaderboard", "render", str(board), "--out", str(tmp / "notes.txt"))


@case("build --html onto the board", ("--html", "leaderboard.json"))
def _(tmp: Path) -> Any:
    board = _board(tmp, lambda d: None)
    return _cli("leaderboard", "build", "--out", str(board.parent), "--html", str(board), "--night", "2026-01-01")


@case("ingest of the board itself", ("--out", "over the input", "leaderboard.json"))
def _(tmp: Path) -> Any:
    board = _board(tmp, lambda d: None)
    return _cli("leaderboard", "ingest", str(board), "--out", str(board.parent), "--no-progress")


for _argv, _message in [
    (("leaderboard", "build", "--night", "2026-13-45"), "--night"),
    (("leaderboard", "build", "--confidence", "1.5"), "--confidence"),
    (("leaderboard", "build", "--n-resamples", "0"), "--n-resamples"),
    (("leaderboard", "build", "--bootstrap-seed", "-1"), "--bootstrap-seed"),
    (("leaderboard", "build", "--metadata", "{max_items: 5}"), "--metadata"),
    (("leaderboard", "build", "--metadata", "[1]"), "--metadata"),
    (("leaderboard", "ingest", "does-not-exist.json"), "does-not-exist.json"),
    (("leaderboard", "validate", "no-board.json"), "no-board.json"),
    (("export-gv", "no-samples.jsonl", "--out", "x"), "no-samples.jsonl"),
    (("causal-confusion", "no-samples.jsonl"), "no-samples.jsonl"),
    (("correlate", "no-results.json"), "no-results.json"),
    (("repair", "no-prefs.jsonl", "--out", "x"), "no-prefs.jsonl"),
    (("repair", "--out", "x"), "INPUT"),
    (("plan", "--tasks", "logic_consistency_no_such_task"), "logic_consistency_no_such_task"),
    (("plan", "--tasks", "logic_consistency_summeval", "--metadata", "{max_items: 5}"), "--metadata"),
    (("plan", "--tasks", "logic_consistency_summeval", "--metadata", "[5]"), "--metadata"),
    (("plan", "--tasks", "logic_consistency_summeval", "--price-in", "-1"), "--price-in"),
    (("plan", "--tasks", "logic_consistency_summeval", "--price-out", "nan"), "--price-out"),
    (("plan", "--tasks", "logic_consistency_summeval", "--limit", "0"), "--limit"),
    (("plan", "--tasks", "logic_consistency_summeval", "--tokenizer", "no/such/tokenizer"), "no/such/tokenizer"),
]:

    def _run_cli(tmp: Path, argv: tuple[str, ...] = _argv) -> Any:
        import os

        here = os.getcwd()
        os.chdir(tmp)
        try:
            return _cli(*argv)
        finally:
            os.chdir(here)

    add(f"command {' '.join(_argv)}", _run_cli, _message)


@case("correlate with an unknown variant", ("include_variants", "pairs", "cot"))
def _(tmp: Path) -> Any:
    from logic_consistency.tasks.pairwise.report import correlation_report

    return correlation_report([], include_variants=["pairs"])


@case("samples file that is not a causal sample", ("samples_logic_consistency_causal_rank", "line 1", "doc.stages"))
def _(tmp: Path) -> Any:
    path = tmp / "samples_logic_consistency_causal_rank_2026-01-01T00-00-00.000000.jsonl"
    path.write_text('{"doc": {}}\n', encoding="utf-8")
    return _cli("causal-confusion", str(path), "--out", str(tmp / "out"))


@case("samples file with a broken line", ("samples_logic_consistency_causal_rank", "line 1", "not valid JSON"))
def _(tmp: Path) -> Any:
    path = tmp / "samples_logic_consistency_causal_rank_2026-01-01T00-00-00.000000.jsonl"
    path.write_text('{"doc": \n', encoding="utf-8")
    return _cli("causal-confusion", str(path), "--out", str(tmp / "out"))


@case("model list with a typo", ("models.yaml", "timeot", "'timeout'"))
def _(tmp: Path) -> Any:
    models = tmp / "models.yaml"
    models.write_text("models:\n  - {name: a, model: dummy, timeot: 5}\n", encoding="utf-8")
    return build(
        tmp / "board", model_list=models, night="2026-01-01", lm_eval="/bin/false", progress=False, log=lambda _: None
    )


@case("build of a corrupt board fails before any model runs", ("leaderboard.json", "s_comm"))
def _(tmp: Path) -> Any:
    board = _board(tmp, lambda d: _metric(d, "logic_consistency_summeval", "s_comm").update(score=7.5))
    models = tmp / "models.yaml"
    models.write_text("models:\n  - {name: a, model: dummy}\n", encoding="utf-8")
    return build(
        board.parent, model_list=models, night="2026-01-01", lm_eval="/bin/false", progress=False, log=lambda _: None
    )


class _FailedBuild(Exception):
    pass


for _model, _script, _message in [
    ("crash", "import sys; print('RuntimeError: CUDA out of memory', file=sys.stderr); sys.exit(3)", "status 3"),
    ("silent", "pass", "wrote no results_*.json"),
]:

    def _failing_build(tmp: Path, model: str = _model, script: str = _script) -> Any:
        fake = tmp / "fake_lm_eval"
        fake.write_text(f"#!{sys.executable}\n{script}\n", encoding="utf-8")
        fake.chmod(0o755)
        models = tmp / "models.yaml"
        models.write_text(f"models:\n  - {{name: {model}, model: {model}}}\n", encoding="utf-8")
        result = build(
            tmp / "board", model_list=models, night="2026-01-01", lm_eval=str(fake), progress=False, log=lambda _: None
        )
        failure = result.document["failures"][0]
        raise _FailedBuild(f"{failure['name']}: {failure['error']['message']}")

    add(f"build with a failing model ({_model})", _failing_build, _model, _message, error=_FailedBuild)


# ------------------------------------------------------------------------------------ lc-chat (chat endpoints)
def _chat_judge(**kwargs: Any) -> Any:
    from logic_consistency.harness_ext.chat_judge import ChatJudgeLM

    return ChatJudgeLM(**{"base_url": "http://127.0.0.1:9/v1/chat/completions", "model": "m", **kwargs})


def _chat_requests(context: Any, continuation: str, task: str = "logic_consistency_causal_ctp_so") -> Any:
    from lm_eval.api.instance import Instance
    from lm_eval.models.api_models import JsonChatStr

    from logic_consistency.harness_ext.chat_judge import _group_by_context

    if context is None:
        context = JsonChatStr(json.dumps([{"role": "user", "content": "q"}]))
    return _group_by_context([Instance("loglikelihood", {}, (context, continuation), 0, (task, 0, 1))])


add("lc-chat top_logprobs above 20", lambda _: _chat_judge(top_logprobs=50), "top_logprobs", "50", error=ValueError)
add("lc-chat max_tokens 0", lambda _: _chat_judge(max_tokens=0), "max_tokens", error=ValueError)
add("lc-chat without base_url", lambda _: _chat_judge(base_url=None), "base_url", error=ValueError)
add(
    "lc-chat multi-word continuation",
    lambda _: _chat_requests(None, " the ground gets wet"),
    "logic_consistency_causal_ctp_so",
    "the ground gets wet",
    error=ValueError,
)
add(
    "lc-chat plain-text context",
    lambda _: _chat_requests("plain prompt", " A", "logic_consistency_caters"),
    "logic_consistency_caters",
    "--apply_chat_template",
    error=ValueError,
)


# ------------------------------------------------------------------------------------ outputs, cache, board
from bad_input_outputs import CASES as OUTPUT_CASES  # noqa: E402 - issue 17's cases, in their own module

for _name, _run, _expect, _error in OUTPUT_CASES:
    add(_name, _run, *_expect, error=_error)


# ------------------------------------------------------------------------------------ the test
def test_the_table_holds_at_least_100_cases() -> None:
    assert len(CASES) >= 100, len(CASES)
    assert len({c.name for c in CASES}) == len(CASES), "case names must be unique"


@pytest.mark.parametrize("bad", CASES, ids=[c.name for c in CASES])
def test_bad_input_is_named(bad: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(bad.error) as raised:
        bad.run(tmp_path)
    message = str(raised.value)
    missing = [part for part in bad.expect if part not in message]
    assert not missing, f"{bad.name}: {missing} not in {type(raised.value).__name__}: {message}"
