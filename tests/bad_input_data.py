"""Bad-input cases of the dataset loaders (``tasks/data``): broken copies of every dataset file and
bad loader options; each message names the file, line, field or option at fault."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bad_inputs_support import DATA_FILES, CaseTable, build_task, copy_data, loader

from logic_consistency.options import OptionError

CASES = CaseTable()


def _corrupt(dataset: str, relative: str, how: str) -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        root = copy_data(tmp)
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
        return loader(dataset)()

    return run


for _dataset, _relative, _header in DATA_FILES:
    _name = Path(_relative).name
    for _how in ("missing", "empty", "truncated", "garbage line") + (("header only",) if _header else ()):
        if _relative.endswith(".txt") and _how in ("truncated", "garbage line"):
            continue  # a story text has no format to break: the .ann offsets are checked instead
        if _relative.endswith("queries.tsv") and _how == "truncated":
            continue  # a cut query list is still a query list (qrels then name the missing id)
        CASES.add(f"data {_dataset} {_name} {_how}", _corrupt(_dataset, _relative, _how), _name)


@CASES.case("data noveleval queries truncated: qrels name the missing query id", "qrels.txt", "qid", "queries.tsv")
def _(tmp: Path) -> Any:
    target = copy_data(tmp) / "noveleval" / "queries.tsv"
    target.write_text(target.read_text(encoding="utf-8").splitlines(keepends=True)[0], encoding="utf-8")
    return loader("noveleval")()


def _summeval_score(index: int, value: Any) -> Callable[[Path], Any]:
    """Set the first human score of record ``index`` (0-based) of the SummEval file to ``value``."""

    def run(tmp: Path) -> Any:
        target = copy_data(tmp) / "summeval" / "summeval_hub_format.jsonl"
        lines = target.read_text(encoding="utf-8").splitlines()
        record = json.loads(lines[index])
        key = next(k for k, v in record.items() if isinstance(v, list) and v and isinstance(v[0], (int, float)))
        record[key][0] = value
        lines[index] = json.dumps(record)
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return loader("summeval")()

    return run


CASES.add("data summeval human score NaN", _summeval_score(0, math.nan), "summeval_hub_format.jsonl", "line 1")
CASES.add("data summeval human score a string", _summeval_score(1, "high"), "summeval_hub_format.jsonl", "line 2")
# Human scores are refused when the data load, before any model call (the metrics would find them only after).
for _name, _value, _expect in [
    ("infinite", math.inf, "not a finite number"),
    ("7 (above 5)", 7, "outside [1, 5]"),
    ("0 (below 1)", 0.0, "outside [1, 5]"),
    ("null", None, "must be a number"),
    ("true", True, "must be a number"),
]:
    CASES.add(
        f"data summeval human score {_name}",
        _summeval_score(2, _value),
        "summeval_hub_format.jsonl",
        "line 3",
        "[0]",
        _expect,
    )


def _summeval_scores(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], Any]:
    """Apply ``change`` to the first record of the SummEval file."""

    def run(tmp: Path) -> Any:
        target = copy_data(tmp) / "summeval" / "summeval_hub_format.jsonl"
        lines = target.read_text(encoding="utf-8").splitlines()
        record = json.loads(lines[0])
        change(record)
        target.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n", encoding="utf-8")
        return loader("summeval")()

    return run


CASES.add(
    "data summeval human scores missing",
    _summeval_scores(lambda record: record.pop("coherence")),
    "summeval_hub_format.jsonl",
    "line 1",
    "'coherence' is missing",
)
CASES.add(
    "data summeval human scores one short",
    _summeval_scores(lambda record: record["coherence"].pop()),
    "summeval_hub_format.jsonl",
    "line 1",
    "'coherence'",
    "one per machine summary",
)
CASES.add(
    "data summeval human scores not a list",
    _summeval_scores(lambda record: record.update(coherence="4.5")),
    "summeval_hub_format.jsonl",
    "line 1",
    "'coherence' must be a list",
)


def _qrels_rel(rel: str | None) -> Callable[[Path], Any]:
    """Set the relevance of the second qrels line to ``rel`` (``None``: drop the column)."""

    def run(tmp: Path) -> Any:
        target = copy_data(tmp) / "noveleval" / "qrels.txt"
        lines = target.read_text(encoding="utf-8").splitlines()
        fields = lines[1].split()[:3]
        lines[1] = " ".join(fields if rel is None else [*fields, rel])
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return loader("noveleval")()

    return run


for _rel, _expect in [
    ("nan", "'rel' must be an integer"),
    ("1.5", "'rel' must be an integer"),
    ("-1", "'rel' value -1"),
]:
    CASES.add(f"data noveleval relevance {_rel}", _qrels_rel(_rel), "qrels.txt", "line 2", _expect)
CASES.add("data noveleval relevance missing", _qrels_rel(None), "qrels.txt", "line 2", "3 columns")


@CASES.case("data advbench bad quote", "harmful_behaviors.csv", "line")
def _(tmp: Path) -> Any:
    target = copy_data(tmp) / "advbench" / "harmful_behaviors.csv"
    target.write_text(target.read_text(encoding="utf-8") + '"Write a plan,Sure\n', encoding="utf-8")
    return loader("advbench")()


@CASES.case("data noveleval relevance 7", "qrels.txt", "rel")
def _(tmp: Path) -> Any:
    target = copy_data(tmp) / "noveleval" / "qrels.txt"
    lines = target.read_text(encoding="utf-8").splitlines()
    fields = lines[0].split()
    target.write_text("\n".join([" ".join([*fields[:3], "7"]), *lines[1:]]) + "\n", encoding="utf-8")
    return loader("noveleval")()


@CASES.case(
    "data caters BEFORE relations in a cycle (no human order)", "test_15Oct.ann", "lines 8,", "14", "story 0", "cycle"
)
def _(tmp: Path) -> Any:
    target = copy_data(tmp) / "caters" / "caters_test" / "test" / "test_15Oct.ann"
    target.write_text(target.read_text(encoding="utf-8") + "R999\tBEFORE Arg1:T2 Arg2:T1\t\n", encoding="utf-8")
    return loader("caters")()


@CASES.case("data caters relation to an undefined event", "test_15Oct.ann", "Arg2", "T999")
def _(tmp: Path) -> Any:
    target = copy_data(tmp) / "caters" / "caters_test" / "test" / "test_15Oct.ann"
    target.write_text(target.read_text(encoding="utf-8") + "R999\tBEFORE Arg1:T1 Arg2:T999\t\n", encoding="utf-8")
    return loader("caters")()


@CASES.case("data caters span outside every story", "test_15Oct.ann", "offsets")
def _(tmp: Path) -> Any:
    target = copy_data(tmp) / "caters" / "caters_test" / "test" / "test_15Oct.ann"
    target.write_text(target.read_text(encoding="utf-8") + "T999\tEvent 999999 1000005\tfar\n", encoding="utf-8")
    return loader("caters")()


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
        copy_data(tmp)
        return loader(dataset)(**{option: value})

    CASES.add(f"option {_dataset} {_option}={_value!r}", _run, _message)


# A dataset_kwargs key the loader does not name: one task of each kind (pairwise, GV, causal), through the
# task class as lm-eval builds it (tests/test_bad_inputs_files_options.py covers every task).
for _task, _key, _loader, _closest in [
    ("logic_consistency_summeval", "aspet", "summeval.load", "'aspect'"),
    ("logic_consistency_gv_arithmetic", "max_digit", "arithmetic.load", "'max_digits'"),
    ("logic_consistency_causal_ctp_so", "one_per_par", "load_ctp", "'one_per_pair'"),
]:
    CASES.add(
        f"dataset_kwargs {_task} {_key}",
        lambda tmp, task=_task, key=_key: build_task(task, **{key: True}),
        f"task {_task!r}",
        _loader,
        f"{_key!r} -> {_closest}",
        error=OptionError,
    )


# Issue 46 (fifth audit): a null record id is an error naming file and field, never the id 'None'; a float
# `choice` is refused with a message, not an IndexError/TypeError traceback.
_FEEDBACK = {"info": {"id": "t3_a", "post": "A post."}, "summaries": [{"text": "One."}, {"text": "Two."}], "choice": 0}


def _feedback_file(tmp: Path, **changes: Any) -> Any:
    from logic_consistency.tasks.data import summarize_feedback

    record = {**_FEEDBACK, **changes}
    path = tmp / "feedback.jsonl"
    path.write_text(json.dumps(_FEEDBACK) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    return summarize_feedback.load_comparisons(path=path)


for _label, _changes, _field, _message in [
    ("a null info.id", {"info": {"id": None, "post": "A post."}}, "info.id", "got None"),
    ("a float choice 0.0", {"choice": 0.0}, "choice", "must be 0 or 1, got 0.0"),
    ("a float choice 1.5", {"choice": 1.5}, "choice", "must be 0 or 1, got 1.5"),
]:
    CASES.add(
        f"data summarize_feedback {_label}",
        lambda tmp, changes=_changes: _feedback_file(tmp, **changes),
        "feedback.jsonl",
        "line 2",
        f"field {_field!r}",
        _message,
    )


@CASES.case("data msmarco a null passage docid", "marco-train-10k.jsonl", "retrieved_passages[1].docid", "got None")
def _(tmp: Path) -> Any:
    from logic_consistency.tasks.data import msmarco

    passages = [{"docid": "d0", "text": "First passage."}, {"docid": None, "text": "Second passage."}]
    (tmp / msmarco.QUERIES_FILE).write_text(json.dumps({"query": "q", "retrieved_passages": passages}) + "\n")
    (tmp / msmarco.PERMUTATIONS_FILE).write_text(json.dumps(["[2] > [1]"]))
    return msmarco.load_with_source(tmp, passages=2)


@CASES.case("data msmarco queries garbage line (issue 47.4: the one JSONL reader)", "marco-train-10k.jsonl", "line 11")
def _(tmp: Path) -> Any:
    from logic_consistency.tasks.data.msmarco import load_with_source

    folder = copy_data(tmp) / "msmarco"
    target = folder / "marco-train-10k.jsonl"
    target.write_text(target.read_text(encoding="utf-8") + '{not a record"\n', encoding="utf-8")
    return load_with_source(folder)


@CASES.case("data msmarco queries line not an object", "marco-train-10k.jsonl", "line 1", "JSON object")
def _(tmp: Path) -> Any:
    from logic_consistency.tasks.data.msmarco import load_with_source

    folder = copy_data(tmp) / "msmarco"
    target = folder / "marco-train-10k.jsonl"
    lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    target.write_text("[1, 2]\n" + "".join(lines[1:]), encoding="utf-8")
    return load_with_source(folder)


def _hub_copy(hub: str, dataset: str, file: str, text: str, name: str | None) -> Callable[[Path], Any]:
    """Load the local copy of ``hub`` (config ``name``) from a data folder whose ``dataset/file`` is ``text``."""

    def run(tmp: Path) -> Any:
        from logic_consistency.harness_ext.task.hub_copies import declared_copies, load_copy

        (tmp / dataset).mkdir(parents=True)
        (tmp / dataset / file).write_text(text, encoding="utf-8")
        return load_copy(declared_copies()[hub], name, tmp)

    return run


# ``fields:`` of a YAML-only dataset (tasks/data/fields.py): the field, the column and the row are named
def _mapped(fields: Any, rows: list[dict[str, Any]], schema: str = "PAIRWISE") -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        import datasets

        from logic_consistency.tasks.data import fields as mapping

        checked = mapping.check_field_map(fields, getattr(mapping, schema), where="task 'mine'")
        data = {"test": datasets.Dataset.from_list(rows)}
        return mapping.map_fields(data, checked, getattr(mapping, schema), where="mine.jsonl")

    return run


CASES.add(
    "data local mmlu copy: a line that is not JSON",
    _hub_copy(
        "cais/mmlu", "mmlu", "mmlu_test.jsonl", '{"question": "q", "subject": "anatomy"}\n{"question": \n', "anatomy"
    ),
    "mmlu_test.jsonl",
    "line 2",
)
CASES.add(
    "data local mmlu copy: no row of the subject",
    _hub_copy("cais/mmlu", "mmlu", "mmlu_test.jsonl", '{"question": "q", "subject": "anatomy"}\n', "astronomy"),
    "mmlu_test.jsonl",
    "'astronomy'",
)
CASES.add(
    "data local triviaqa copy: a record without aliases",
    _hub_copy(
        "mandarjoshi/trivia_qa",
        "triviaqa",
        "triviaqa.json",
        '[{"qid": "q1", "question": "q", "gold_answer": "a"}]',
        "rc.nocontext",
    ),
    "triviaqa.json",
    "record 1",
    "'aliases'",
)
_ROW = {"id": "q1", "q": "which?", "cands": ["a", "b"], "s": [1, 2]}
_FIELDS = {"instance_id": "id", "context": "q", "items": "cands", "human_scores": "s"}
CASES.add("data fields not a mapping", _mapped(["id"], [_ROW]), "fields must be a mapping")
CASES.add("data fields unknown field", _mapped({**_FIELDS, "itemz": "cands"}, [_ROW]), "'itemz' -> 'items'")
CASES.add("data fields empty source", _mapped({**_FIELDS, "items": []}, [_ROW]), "fields.items must be a column")
CASES.add("data fields missing column", _mapped({**_FIELDS, "items": "cand"}, [_ROW]), "fields.items", "'cands'")
CASES.add("data fields unmapped required", _mapped({"instance_id": "id"}, [_ROW]), "field 'context' is missing")
CASES.add("data fields one item", _mapped(_FIELDS, [{**_ROW, "cands": ["a"]}]), "row 1", "field 'items'", "at least 2")
CASES.add("data fields null id", _mapped(_FIELDS, [{**_ROW, "id": None}]), "row 1", "field 'instance_id'")
CASES.add("data fields score text", _mapped(_FIELDS, [{**_ROW, "s": ["1", "high"]}]), "human_scores[1]", "'high'")
CASES.add("data fields score NaN", _mapped(_FIELDS, [{**_ROW, "s": [1, math.nan]}]), "human_scores[1]", "finite")
# a GV question-answering dataset by YAML (GV_QA): the file, the row and the field are named
_QA = {"id": "q1", "q": "Capital of France?", "gold": ["Paris"]}
_QA_FIELDS = {"instance_id": "id", "question": "q", "answers": "gold"}
CASES.add("data gv fields unknown field", _mapped({**_QA_FIELDS, "answer": "gold"}, [_QA], "GV_QA"), "'answer'")
CASES.add("data gv fields no answer", _mapped(_QA_FIELDS, [{**_QA, "gold": []}], "GV_QA"), "mine.jsonl", "'answers'")
CASES.add("data gv fields blank question", _mapped(_QA_FIELDS, [{**_QA, "q": ""}], "GV_QA"), "row 1", "'question'")
CASES.add("data gv fields answer not text", _mapped(_QA_FIELDS, [{**_QA, "gold": [1.5]}], "GV_QA"), "'answers'")
