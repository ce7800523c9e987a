"""Every documented option (README's options table) changes what it names, end to end through
lm-eval's ``TaskManager`` (as ``--metadata`` sets it); near misses of option names are errors naming
the task and the closest key in every family, before any data loads; model arguments pass."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.options import OPTIONS_FILE, SUITE_OPTIONS, OptionError, declared_options, load_option_file
from logic_consistency.tasks.data import DATA_ENV_VAR, _source
from logic_consistency.tasks.pairwise.options import METADATA_KEYS

FIXTURE_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"


@pytest.fixture(autouse=True)
def fixture_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(FIXTURE_DATA))


def load(task: str, **metadata: Any) -> Any:
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
    return manager.load(task)["tasks"][task]


def docs(task: str, **metadata: Any) -> list[dict[str, Any]]:
    return list(load(task, **metadata).test_docs())


# ----------------------------------------------------------------------------- one rule for all
@pytest.mark.parametrize(
    ("task", "key", "closest"),
    [
        ("logic_consistency_summeval", "max_itemz", "max_items"),
        ("logic_consistency_caters", "ordr", "order"),
        ("logic_consistency_gv_arithmetic", "n_doc", "n_docs"),
        ("logic_consistency_gv_arithmetic", "max_digit", "max_digits"),
        ("logic_consistency_gv_plan_arithmetic", "negaton", "negation"),
        ("logic_consistency_gv_triviaqa", "seeds", "seed"),
        ("logic_consistency_causal_ranking", "one_per_par", "one_per_pair"),
        ("logic_consistency_causal_ctp_so", "splt", "split"),
    ],
)
def test_near_miss_is_an_error_naming_task_and_closest_key_before_any_data_loads(
    task: str, key: str, closest: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_data(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("data loaded before the options were checked")

    monkeypatch.setattr(_source, "resolve_files", no_data)
    monkeypatch.setattr(_source, "local_file", no_data)
    with pytest.raises(OptionError, match=rf"task '{task}'.*'{key}'.*did you mean '{closest}'"):
        load(task, **{key: 5})


def test_model_arguments_and_other_families_options_pass() -> None:
    # lm-eval 0.4.13 merges --model_args into every task's metadata
    found = docs(
        "logic_consistency_gv_arithmetic",
        n_docs=3,
        pretrained="x",
        dtype="float32",
        max_items=4,
        min_shared_tokens=256,
        trust_remote_code=True,
    )
    assert len(found) == 3


def test_a_dataset_kwarg_cannot_be_overridden_through_metadata() -> None:
    with pytest.raises(OptionError, match=r"logic_consistency_causal_ctp_so.*conjunction.*dataset_kwargs"):
        load("logic_consistency_causal_ctp_so", conjunction="as")


def test_suite_options_are_the_families_options() -> None:
    import inspect

    from logic_consistency.tasks.causal import hooks
    from logic_consistency.tasks.data import caters, delta_causal, summeval
    from logic_consistency.tasks.gv import (
        arithmetic,
        harmful,
        plan_arithmetic,
        prompt_prioritization,
        style_transfer,
        triviaqa,
    )

    loaders = [
        caters.load,
        summeval.load,
        delta_causal.load,
        hooks.load_ctp,
        arithmetic.load,
        plan_arithmetic.load,
        harmful.load,
        prompt_prioritization.load,
        style_transfer.load,
        triviaqa.load,
    ]
    names = {
        p
        for loader in loaders
        for p, spec in inspect.signature(loader).parameters.items()
        if spec.kind is spec.KEYWORD_ONLY
    }
    # and the options every task class reads whatever its family (harness_ext/_options_yaml: instance_split)
    declared = load_option_file(Path(tasks_dir()).parent / "harness_ext" / OPTIONS_FILE)
    generic = {arg.name for arg in declared if arg.applies == "task option"}  # not its command-line flags
    # and the invariance family's options, which its task class reads (tasks/invariance/task.py)
    from logic_consistency.tasks.invariance.task import OPTION_NAMES

    assert names | set(METADATA_KEYS) | generic | set(OPTION_NAMES) == SUITE_OPTIONS
    # each declared default is what a loader taking the option defaults to (GV's differ per task:
    # the declaration states the main task's), or what the pairwise task reads from the declaration
    defaults: dict[str, set[Any]] = {}
    for loader in loaders:
        for p, spec in inspect.signature(loader).parameters.items():
            defaults.setdefault(p, set()).add(spec.default)
    for name, arg in declared_options().items():
        if name in defaults:
            assert arg.default in defaults[name], name
        else:
            assert name in METADATA_KEYS or name in generic or name in OPTION_NAMES, name


def test_declared_choices_and_bounds_are_the_codes() -> None:
    """The tables the code dispatches on offer what the declarations allow, and the PairS search and
    self-agreement bounds are the metrics library's."""
    from logic_consistency.metrics.pairs_sort import METHODS, PairsSearch
    from logic_consistency.metrics.self_agreement import MIN_PARSED
    from logic_consistency.tasks.causal.prompts import CONJUNCTIONS
    from logic_consistency.tasks.data.caters import COUNT_EVENTS, ORDERS
    from logic_consistency.tasks.data.delta_causal import SPLIT_FILES
    from logic_consistency.tasks.data.summeval import ASPECTS
    from logic_consistency.tasks.gv.plan_arithmetic import NEGATIONS
    from logic_consistency.tasks.gv.style_inputs import STYLE_SPLITS

    declared = declared_options()
    for name, code in [
        ("aspect", ASPECTS),
        ("order", ORDERS),
        ("count_events", COUNT_EVENTS),
        ("split", SPLIT_FILES),
        ("conjunction", CONJUNCTIONS),
        ("negation", NEGATIONS),
        ("style_split", STYLE_SPLITS),
        ("pairs_method", METHODS),
    ]:
        assert set(declared[name].choices or ()) == set(code), name
    assert declared["samples"].minimum == MIN_PARSED
    gap = declared["pairs_prob_gap"]
    assert gap.minimum is not None and gap.maximum is not None
    PairsSearch("beam", int(declared["pairs_beam_size"].minimum or 0), gap.maximum)
    for outside in (gap.minimum - 0.01, gap.maximum + 0.01):
        with pytest.raises(ValueError, match="prob_gap"):
            PairsSearch("beam", 1, outside)
    with pytest.raises(ValueError, match="beam_size"):
        PairsSearch("beam", int(declared["pairs_beam_size"].minimum or 0) - 1, 0.1)


# ----------------------------------------------------------------------------- bounds
@pytest.mark.parametrize(
    ("task", "key"),
    [
        ("logic_consistency_summeval", "pairs_runs"),
        ("logic_consistency_summeval", "transitivity_samples"),
        ("logic_consistency_summeval_cot_sc", "samples"),
        ("logic_consistency_gv_arithmetic", "n_docs"),
        ("logic_consistency_gv_triviaqa", "n_docs"),
    ],
)
def test_sizes_have_stated_upper_bounds(task: str, key: str) -> None:
    bound = declared_options()[key].maximum
    assert isinstance(bound, int)
    with pytest.raises(OptionError, match=rf"task '{task}'.*{key} must be at most {bound:,}"):
        load(task, **{key: bound + 1})


# ----------------------------------------------------------------------------- each option acts
def test_max_items_seed_caps_and_draws_the_items() -> None:
    capped = docs("logic_consistency_summeval", max_items=4, ks=[3, 4])
    assert {len(doc["items"]) for doc in capped} == {4}
    other_seed = docs("logic_consistency_summeval", max_items=4, ks=[3, 4], seed=7)
    assert [doc["item_ids"] for doc in capped] != [doc["item_ids"] for doc in other_seed]


def _scores(task: str, n_items: int = 6, **metadata: Any) -> dict[str, Any]:
    """process_results of the first instance with a fixed noisy judge (log-likelihoods)."""
    loaded = load(task, max_items=n_items, **{"ks": [3, 4], **metadata})
    doc = next(iter(loaded.test_docs()))
    rng = np.random.default_rng(0)
    results = []
    for _ in loaded.plan(doc):
        a = float(rng.normal())
        results += [(a, False), (0.0, False)]
    return loaded.process_results(doc, results)


def test_ks_transitivity_samples_calibrated_pairs_runs_change_their_scores() -> None:
    base = _scores("logic_consistency_summeval")
    assert "s_tran_4" in base and 0 < base["s_tran_3"] < 1
    assert "s_tran_4" not in _scores("logic_consistency_summeval", ks=[3])
    sampled = [
        _scores("logic_consistency_summeval", transitivity_samples=1, seed=seed)["s_tran_3"] for seed in range(4)
    ]
    assert set(sampled) <= {0.0, 1.0}  # one random 3-subset: acyclic or not
    calibrated = _scores("logic_consistency_summeval", calibrated=True)
    assert calibrated["s_comm"] != base["s_comm"] or calibrated["s_tran_3"] != base["s_tran_3"]
    assert "pairs_spearman" in base
    assert "pairs_spearman" not in _scores("logic_consistency_summeval", pairs_runs=0)


def test_samples_sets_k() -> None:
    assert load("logic_consistency_summeval_cot_sc", samples=3).samples == 3


def test_caters_order_reaches_the_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    from logic_consistency.tasks.data import caters

    seen: list[str] = []
    original = caters.load

    @functools.wraps(original)  # the task reads the loader's parameters from its signature
    def spy(**kwargs: Any) -> Any:
        seen.append(kwargs.get("order", "annotated"))
        return original(**kwargs)

    monkeypatch.setattr(caters, "load", spy)
    narrative = docs("logic_consistency_caters", order="narrative")
    annotated = docs("logic_consistency_caters")
    assert seen[-2:] == ["narrative", "annotated"]
    expected = original(order="narrative")["test"].to_list()
    assert [d["human_scores"] for d in narrative] == [row["human_scores"] for row in expected]
    assert len(narrative) == len(annotated)
    with pytest.raises(OptionError, match=r"logic_consistency_caters.*order.*'bogus'"):
        load("logic_consistency_caters", order="bogus")


def test_caters_min_events_and_count_events_filter_stories() -> None:
    every = docs("logic_consistency_caters", min_events=2)
    assert len(docs("logic_consistency_caters", min_events=2, count_events="before")) <= len(every)
    assert len(docs("logic_consistency_caters", min_events=8)) < len(every)
    with pytest.raises(ValueError, match=r"logic_consistency_caters.*no documents.*min_events"):
        load("logic_consistency_caters", min_events=500)


def test_gv_options_change_their_documents() -> None:
    assert len(docs("logic_consistency_gv_arithmetic", n_docs=4)) == 4
    times = docs("logic_consistency_gv_arithmetic", n_docs=6, operations="*")
    assert all(
        "*" in doc["question"] or "times" in doc["question"].lower() or "product" in doc["question"].lower()
        for doc in times
    )
    small = docs("logic_consistency_gv_arithmetic", n_docs=20, max_digits=1)
    assert all(max(doc["a"], doc["b"]) < 10 for doc in small)
    constraint = docs("logic_consistency_gv_plan_arithmetic", n_docs=3, negation="constraint")
    assert {doc["negation"] for doc in constraint} == {"constraint"}
    assert len(docs("logic_consistency_gv_triviaqa", n_docs=2)) == 2


def test_causal_options_change_their_documents() -> None:
    every = docs("logic_consistency_causal_ranking")
    one = docs("logic_consistency_causal_ranking", one_per_pair=True)
    assert len(one) < len(every) and len({(d["cause"], d["effect"]) for d in one}) == len(one)
    reseeded = docs("logic_consistency_causal_ranking", seed=7)
    assert [d["display_order"] for d in reseeded] != [d["display_order"] for d in every]
    validation = docs("logic_consistency_causal_ranking", split="validation")
    assert [d["id"] for d in validation] != [d["id"] for d in every]


def test_summeval_aspect_picks_the_human_scores() -> None:
    coherence = docs("logic_consistency_summeval")
    fluency = docs("logic_consistency_summeval", aspect="fluency")
    assert {d["aspect"] for d in fluency} == {"fluency"}
    assert [d["human_scores"] for d in fluency] != [d["human_scores"] for d in coherence]
