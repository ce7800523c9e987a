"""REPAIR data tool: rank estimation, augmentation, statistics and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logic_consistency.cli import main
from logic_consistency.tasks.pairwise.repair import (
    Comparison,
    Instance,
    chat_records,
    data_statistics,
    flip_labels,
    from_samples,
    read_preferences,
    repair,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "data"

# a > b twice, b > c, c > a (a 3-cycle), every item beats d; only one presentation order each.
INTRANSITIVE = [
    ("a", "b", "a"),
    ("a", "b", "a"),
    ("b", "c", "b"),
    ("c", "a", "c"),
    ("a", "d", "a"),
    ("b", "d", "b"),
    ("c", "d", "c"),
]


def write_prefs(path: Path, rows=INTRANSITIVE, texts: bool = True) -> Path:
    with path.open("w") as handle:
        for first, second, winner in rows:
            record = {"instance_id": "x", "item_a": first, "item_b": second, "winner": winner}
            if texts:
                record.update(text_a=f"text of {first}", text_b=f"text of {second}", context="ctx")
            handle.write(json.dumps(record) + "\n")
    return path


def test_repair_makes_an_intransitive_set_transitive_in_both_orders(tmp_path):
    prefs = read_preferences(write_prefs(tmp_path / "prefs.jsonl"))
    before = data_statistics(prefs, ks=(3,))
    assert before["s_tran_3"] < 1.0  # the a > b > c > a cycle
    assert before["s_comm"] is None  # no pair shown in both orders
    repaired = repair(prefs)
    after = data_statistics(repaired, ks=(3, 4))
    assert after["s_tran_3"] == 1.0 and after["s_tran_4"] == 1.0
    assert after["s_comm"] == 1.0
    comparisons = repaired["x"].comparisons
    # win-loss rates a 0.5, c 1/3, b 0, d -1: a strict order, so all 6 pairs in both orders
    assert len(comparisons) == 12
    shown = {(c.first, c.second) for c in comparisons}
    assert all((second, first) in shown for first, second in shown)
    assert {(c.first, c.second, c.winner) for c in comparisons} >= {("b", "c", "c"), ("c", "b", "c")}


def test_win_loss_ties_stay_uncompared():
    instance = Instance(texts={"a": "A", "b": "B", "c": "C"})
    instance.comparisons = [Comparison("a", "b", "a"), Comparison("a", "c", "a")]
    repaired = repair({"x": instance})["x"]
    pairs = {frozenset((c.first, c.second)) for c in repaired.comparisons}
    assert pairs == {frozenset("ab"), frozenset("ac")}  # b = c: not compared (Figure 6)
    # Elo depends on the order of the comparisons and separates b from c (Appendix N)
    assert len(repair({"x": instance}, method="elo")["x"].comparisons) == 6
    # Bradley-Terry: b and c are symmetric, so equal up to convergence noise, which is rounded away
    assert len(repair({"x": instance}, method="bt")["x"].comparisons) == 4


def test_chat_records_both_orders_and_negated(tmp_path):
    repaired = repair(read_preferences(write_prefs(tmp_path / "prefs.jsonl")))
    plain = list(chat_records(repaired, negated=False))
    negated = list(chat_records(repaired, negated=True))
    assert len(negated) == 2 * len(plain) == 24
    record = plain[0]
    assert [m["role"] for m in record["messages"]] == ["user", "assistant"]
    assert "Context: ctx" in record["messages"][0]["content"]
    worse = [r for r in negated if r["relation"] == "worse"]
    better = {(r["item_a"], r["item_b"]): r["messages"][1]["content"] for r in negated if r["relation"] == "better"}
    assert all(better[(r["item_a"], r["item_b"])] != r["messages"][1]["content"] for r in worse)
    with pytest.raises(ValueError, match="has no text"):
        list(chat_records(repair(read_preferences(write_prefs(tmp_path / "ids.jsonl", texts=False))), negated=False))


def test_flip_labels_is_seeded():
    prefs = {"x": Instance(texts=dict.fromkeys("ab"), comparisons=[Comparison("a", "b", "a")] * 10)}
    flipped, count = flip_labels(prefs, 0.1, seed=3)
    assert count == 1
    assert sum(c.winner == "b" for c in flipped["x"].comparisons) == 1
    assert flip_labels(prefs, 0.1, seed=3)[0]["x"].comparisons == flipped["x"].comparisons


def test_bad_preference_lines_name_the_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"instance_id": "x", "item_a": "a", "item_b": "b", "winner": "c"}) + "\n")
    with pytest.raises(ValueError, match="line 1: field 'winner'"):
        read_preferences(path)


def test_cli_writes_data_and_statistics(tmp_path, capsys):
    source = write_prefs(tmp_path / "prefs.jsonl")
    assert main(["repair", str(source), "--out", str(tmp_path / "out"), "--ks", "3"]) == 0
    printed = capsys.readouterr().out
    assert "s_tran(3)" in printed and "agreement of the refined ranking" in printed
    stats = json.loads((tmp_path / "out" / "repair_stats.json").read_text())
    assert stats["after"]["s_tran_3"] == 1.0 and stats["before"]["s_tran_3"] < 1.0
    # 7 input comparisons; the refined order a > c > b > d contradicts "b beats c" and "c beats a"
    assert stats["agreement"] == pytest.approx(5 / 7)
    lines = (tmp_path / "out" / "repaired_with_negated.jsonl").read_text().splitlines()
    assert len(lines) == 24


def test_cli_refuses_to_write_over_its_input(tmp_path, capsys):
    source = write_prefs(tmp_path / "repaired.jsonl")
    before = source.read_text()
    assert main(["repair", str(source), "--out", str(tmp_path)]) == 2
    assert "refusing to write over the input" in capsys.readouterr().err
    assert source.read_text() == before


def test_cli_reads_summarize_from_feedback(tmp_path, capsys):
    source = FIXTURES / "summarize_from_feedback" / "comparisons_validation.jsonl"
    assert main(["repair", str(source), "--format", "summarize_feedback", "--out", str(tmp_path), "--ks", "3"]) == 0
    stats = json.loads((tmp_path / "repair_stats.json").read_text())
    assert stats["before"]["instances"] == 2 and stats["before"]["comparisons"] == 4
    first = json.loads((tmp_path / "repaired.jsonl").read_text().splitlines()[0])
    assert "Summary A:" in first["messages"][0]["content"]


def test_reads_pairwise_log_samples(tmp_path):
    # generation log of one instance with 3 items; the judge always answers A except one babble
    answers = ["A", "A", "I am not sure", "A", "A", "A"]
    sample = {
        "doc": {"instance_id": "i0", "context": "c", "items": ["x", "y", "z"], "item_ids": ["S0", "S1", "S2"]},
        "resps": [[a] for a in answers],
    }
    path = tmp_path / "samples_logic_consistency_summeval_generate_2026-01-01T00-00-00.000000.jsonl"
    path.write_text(json.dumps(sample) + "\n")
    prefs, unparseable, ties = from_samples(path)
    assert (unparseable, ties) == (1, 0)
    assert len(prefs["i0"].comparisons) == 5
    assert all(c.winner == c.first for c in prefs["i0"].comparisons)
    assert data_statistics(prefs, ks=(3,))["s_comm"] == 0.0


def test_reads_loglikelihood_log_samples_as_logged_by_lm_eval(tmp_path):
    # lm-eval logs each log-likelihood as strings [logprob, is_greedy]; two per judgement (A, B).
    # The judge prefers the item with the larger index, whichever side it is shown on.
    pairs = [(0, 1), (1, 0)]
    resps = []
    for i, j in pairs:
        a_better = i > j
        resps += [[[str(-0.1 if a_better else -2.0), "False"]], [[str(-2.0 if a_better else -0.1), "False"]]]
    sample = {"doc": {"instance_id": "i1", "items": ["p", "q"], "item_ids": ["P", "Q"]}, "resps": resps}
    path = tmp_path / "samples_logic_consistency_caters_2026-01-01T00-00-00.000000.jsonl"
    path.write_text(json.dumps(sample) + "\n")
    prefs, unparseable, ties = from_samples(path)
    assert (unparseable, ties) == (0, 0)
    assert [(c.first, c.second, c.winner) for c in prefs["i1"].comparisons] == [("P", "Q", "Q"), ("Q", "P", "Q")]
    assert data_statistics(prefs, ks=(3,))["s_comm"] == 1.0


@pytest.mark.parametrize("second", ["-0.7", "-0.700000999", "-0.699999001"])  # equal, and just inside 1e-6
def test_tied_log_likelihoods_are_skipped_and_counted_not_won_by_option_a(tmp_path, second):
    # (P, Q) tied (log-likelihoods closer than TIE_TOLERANCE), (Q, P) decided for P: only that one is kept
    resps = [[["-0.7", "False"]], [[second, "False"]], [["-2.0", "False"]], [["-0.1", "False"]]]
    sample = {"doc": {"instance_id": "i2", "items": ["p", "q"], "item_ids": ["P", "Q"]}, "resps": resps}
    path = tmp_path / "samples_logic_consistency_caters_2026-01-01T00-00-00.000000.jsonl"
    path.write_text(json.dumps(sample) + "\n")
    prefs, unparseable, ties = from_samples(path)
    assert (unparseable, ties) == (0, 1)
    assert [(c.first, c.second, c.winner) for c in prefs["i2"].comparisons] == [("Q", "P", "P")]


def test_cli_warns_when_everything_is_tied(tmp_path, capsys):
    # an always-first judge asked both orders: every item wins as often as it loses
    rows = [("a", "b", "a"), ("b", "a", "b"), ("a", "c", "a"), ("c", "a", "c"), ("b", "c", "b"), ("c", "b", "c")]
    source = write_prefs(tmp_path / "prefs.jsonl", rows=rows)
    assert main(["repair", str(source), "--out", str(tmp_path / "out")]) == 0
    assert "no pair could be ordered" in capsys.readouterr().out
    assert (tmp_path / "out" / "repaired.jsonl").read_text() == ""
