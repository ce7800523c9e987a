"""The causal tasks' parsers on a corpus of realistic messy model outputs."""

from __future__ import annotations

import pytest

from logic_consistency.tasks.causal import hooks
from logic_consistency.tasks.causal.parsing import ParseError, normalize_text, parse_arguments, parse_ranking

FIRST = "The ferry company cancels the night crossing."
SECOND = "Mara loses her ticket at the harbour."

# ----------------------------------------------------------------------------- generation answers
GOOD_GENERATIONS = [
    f"{FIRST}\n{SECOND}",
    f"{FIRST}\n{SECOND}\n",
    f"\n\n{FIRST}\r\n{SECOND}",
    f"1. {FIRST}\n2. {SECOND}",
    f"1) {FIRST}\n2) {SECOND}",
    f"(1) {FIRST}\n(2) {SECOND}",
    f"- {FIRST}\n- {SECOND}",
    f"* {FIRST}\n* {SECOND}",
    f"• {FIRST}\n• {SECOND}",
    f"Defeater 1: {FIRST}\nDefeater 2: {SECOND}",
    f"Weaker defeater 1: {FIRST}\nWeaker defeater 2: {SECOND}",
    f"First defeater: {FIRST}\nSecond defeater: {SECOND}",
    f"**Supporter 1:** {FIRST}\n**Supporter 2:** {SECOND}",
    f"1. **{FIRST}**\n2. **{SECOND}**",
    f'"{FIRST}"\n"{SECOND}"',
    f"‘{FIRST}’\n‘{SECOND}’",
    f"“{FIRST}”\n“{SECOND}”",
    f"Sure, here are two weaker defeaters:\n\n{FIRST}\n{SECOND}",
    f"Sure! Here are two weaker defeaters for the cause-effect relationship:\n1. {FIRST}\n2. {SECOND}",
    f"Here are the two defeaters:\n\n1. {FIRST}\n\n2. {SECOND}\n\nI hope this helps!",
    f"Certainly.\n{FIRST}\n{SECOND}",
    f"Weaker defeaters:\n{FIRST}\n{SECOND}",
    f"{FIRST}\n{SECOND}\n\nNote: the second defeater is weaker than the first.",
    f"1. {FIRST} 2. {SECOND}",
    f"  1.  {FIRST}  \n  2.  {SECOND}  ",
    f"Defeater 1 - {FIRST}\nDefeater 2 - {SECOND}",
    f"a) {FIRST}\nb) {SECOND}",
    f"The first generated defeater is: '{FIRST}'\nThe second generated defeater is: '{SECOND}'",
    f"The original defeater is: 'A storm hits.'\nThe first generated defeater is: {FIRST}\nThe second generated defeater is: {SECOND}",
]


@pytest.mark.parametrize("text", GOOD_GENERATIONS)
def test_generation_answers_with_two_arguments(text: str) -> None:
    assert parse_arguments(text) == [FIRST, SECOND]


@pytest.mark.parametrize(
    "text",
    [
        "3.5 million tourists arrive on the island each summer.\nThe island's cafés hire more staff.",
        "10:30 ferries are always late.\nDefeaters of the plan rarely win.",
        "Supporters of the island's cafés fund a festival.\nArguments over prices close a café.",
    ],
)
def test_argument_text_that_looks_like_a_marker_is_kept(text: str) -> None:
    assert parse_arguments(text) == text.split("\n")


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("lol", "found 1"),
        (FIRST, "found 1"),
        (f"Sure, here is a weaker defeater:\n{FIRST}", "found 1"),
        (f"1. {FIRST}", "found 1"),
        ("", "empty answer"),
        ("   \n  ", "empty answer"),
        ("Sure, here are two weaker defeaters:", "found none"),
        (f"1. {FIRST}\n2. {SECOND}\n3. The harbour is closed for repairs.", "found 3"),
        (f"{FIRST}\n{SECOND}\n{FIRST}", "found 3"),
        ("1.\n2.", "found none"),
        # seen from SmolLM2-135M: the original restated, then one generated argument
        (f"The original defeater is: '{FIRST}'\nThe second generated defeater is: '{SECOND}'", "found 1"),
    ],
)
def test_generation_answers_without_exactly_two_arguments_fail(text: str, found: str) -> None:
    with pytest.raises(ParseError, match=f"expected 2 arguments \\(one per line\\), {found}|{found}"):
        parse_arguments(text)


def test_non_string_generation_fails() -> None:
    with pytest.raises(ParseError):
        parse_arguments(None)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- ranking answers
ARGUMENTS = [
    "John is appointed to a nonpartisan governmental position.",
    "John decides to become an independent politician.",
    "John changes his mind and runs on the Democratic ticket.",
    "leaving the democratic party might imply a preference for an opposing party.",
    "abandoning the democratic party strongly indicates a shift towards republican ideals and membership.",
    "leaving one party could indicate a desire to join another.",
    "John changes his position to remain an independent voter.",
    "John changes his mind and votes for Democratic candidates.",
    "departing the democratic party suggests a likelihood of aligning with the republican opposition.",
    "deciding to leave might show interest in an alternative political group.",
]
RANKING = [3, 8, 1, 7, 2, 10, 6, 4, 9, 5]
SPACED = " ".join(map(str, RANKING))

GOOD_RANKINGS = [
    SPACED,
    SPACED + "\n",
    f" {SPACED}.",
    ", ".join(map(str, RANKING)),
    str(RANKING),
    " > ".join(map(str, RANKING)),
    " < ".join(map(str, RANKING)),
    " -> ".join(map(str, RANKING)),
    " → ".join(map(str, RANKING)),
    "Ranking: " + SPACED,
    "The ranking is: " + SPACED,
    "**Ranking:** " + SPACED,
    f"Sure! Here is the ranking of the 10 arguments:\n\n{SPACED}",
    f"Here is the ranking from most weakening to most strengthening:\n{SPACED}\n\nThis ranking reflects how each argument affects the pair.",
    " > ".join(f"Argument {n}" for n in RANKING),
    ", ".join(f"({n})" for n in RANKING),
    "\n".join(map(str, RANKING)),
    "\n".join(f"{n}." for n in RANKING),
    "\n".join(f"Argument {n}" for n in RANKING),
    "\n".join(f"- {n}" for n in RANKING),
    "\n".join(f"{rank}. {n}" for rank, n in enumerate(RANKING, start=1)),
    "\n".join(f"{rank}. Argument {n}" for rank, n in enumerate(RANKING, start=1)),
    "\n".join(f"Rank {rank}: {n}" for rank, n in enumerate(RANKING, start=1)),
    # the sentences themselves, bare, with their own index, or numbered by rank
    "\n".join(ARGUMENTS[n - 1] for n in RANKING),
    "\n".join(f"{n}. {ARGUMENTS[n - 1]}" for n in RANKING),
    "\n".join(f"{rank}. {ARGUMENTS[n - 1]}" for rank, n in enumerate(RANKING, start=1)),
    "\n".join(f"{rank}. Argument {n}: {ARGUMENTS[n - 1]}" for rank, n in enumerate(RANKING, start=1)),
    "Here you go:\n" + "\n".join(f'- "{ARGUMENTS[n - 1].upper()}"' for n in RANKING),
    "\n".join(f"{n}. {ARGUMENTS[n - 1]} - this one matters" for n in RANKING),
    # the same ranking twice is still one ranking
    f"{SPACED}\n\nFinal answer: {SPACED}",
]


@pytest.mark.parametrize("text", GOOD_RANKINGS)
def test_ranking_answers(text: str) -> None:
    assert parse_ranking(text, ARGUMENTS) == RANKING


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("lol", "no ranking found"),
        ("", "empty answer"),
        ("I cannot rank these arguments.", "no ranking found"),
        ("3 8 1 7 2 10 6 4 9", r"missing indices \[5\]"),
        ("3 8 1 7 2 10 6 4 9 9", r"repeated indices \[9\]; missing indices \[5\]"),
        ("3 8 1 7 2 10 6 4 9 5 11", r"indices outside 1-10: \[11\]"),
        ("3 8 1 7 2 10 6 4 9 0", r"indices outside 1-10: \[0\]"),
        ("3 8 1 7 2", r"missing indices \[4, 5, 6, 9, 10\]"),
        (f"{SPACED}\nActually: 1 2 3 4 5 6 7 8 9 10", "2 different rankings"),
        ("\n".join(ARGUMENTS[n - 1] for n in RANKING[:9]), r"missing indices \[5\]"),
        ("\n".join(f"{n}. {ARGUMENTS[n - 1]}" for n in [3, 8, 1, 7, 2, 10, 6, 4, 9, 9]), r"repeated indices \[9\]"),
        ("Argument 3: " + ARGUMENTS[7], "names argument 3 but repeats argument 8"),
        # seen from SmolLM2-135M-Instruct: sentences numbered by rank, one paraphrased, cut off
        (
            "1. John is appointed to a nonpartisan governmental position.\n2. John decides to become an independent "
            "politician.\n3. John changes his position to remain an independent voter.\n4. Leaving the democratic "
            "party might indicate a shift towards republican ideals and membership.\n5. Leaving one party could "
            "indicate a desire",
            r"incomplete ranking \[1, 2, 7\]: missing indices \[3, 4, 5, 6, 8, 9, 10\]",
        ),
    ],
)
def test_bad_ranking_answers_fail_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(ParseError, match=reason):
        parse_ranking(text, ARGUMENTS)


def test_sentences_shared_by_two_arguments_need_an_index() -> None:
    twins = [*ARGUMENTS[:9], ARGUMENTS[0]]
    with pytest.raises(ParseError, match="shared by arguments"):
        parse_ranking("\n".join(twins[n - 1] for n in RANKING), twins)
    assert parse_ranking(" ".join(map(str, RANKING)), twins) == RANKING


def test_normalize_text() -> None:
    assert normalize_text("  **“John Leaves.”**  ") == "john leaves"
    assert normalize_text("‘x’.") == "x"


# ----------------------------------------------------------------------------- the stage hooks
DOC = {
    "id": "101",
    "cause": "Mara takes the night ferry to the island.",
    "effect_interval": "Days later,",
    "effect": "Mara knows every café on the island by name.",
    "defeater": "A storm forces the ferry to turn back.",
    "supporter": "Mara plans to stay for two weeks.",
    "display_order": [9, 0, 5, 4, 1, 8, 2, 7, 3, 6],
}
OUTPUTS = {
    "weaker_defeaters": "Sure, here are two weaker defeaters:\n1. WD1\n2. WD2",
    "stronger_defeaters": "SD1\nSD2",
    "weaker_supporters": "- WS1\n- WS2",
    "stronger_supporters": "Supporter 1: SS1\nSupporter 2: SS2",
}


def test_parse_generation_labels_the_ten_intermediates() -> None:
    parsed = hooks.parse_generation(DOC, OUTPUTS)
    assert parsed["intermediates"] == {
        "-5": "SD2",
        "-4": "SD1",
        "-3": DOC["defeater"],
        "-2": "WD1",
        "-1": "WD2",
        "+1": "WS2",
        "+2": "WS1",
        "+3": DOC["supporter"],
        "+4": "SS1",
        "+5": "SS2",
    }
    assert parsed["shown_labels"] == [5, -5, 1, -1, -4, 4, -3, 3, -2, 2]


def test_parse_generation_reports_every_unparseable_prompt() -> None:
    parsed = hooks.parse_generation(DOC, {**OUTPUTS, "weaker_defeaters": "lol", "stronger_supporters": ""})
    assert parsed["unparseable_prompts"] == ["weaker_defeaters", "stronger_supporters"]
    assert "weaker_defeaters: expected 2 arguments" in parsed["error"]
    assert "stronger_supporters: empty answer" in parsed["error"]


def _with_generation() -> dict:
    return {**DOC, "stages": {"generation": {"parsed": hooks.parse_generation(DOC, OUTPUTS)}}}


def test_parse_ranking_output_maps_indices_to_labels() -> None:
    doc = _with_generation()
    shown = doc["stages"]["generation"]["parsed"]["shown_labels"]
    consistent = sorted(range(1, 11), key=lambda number: shown[number - 1])
    parsed = hooks.parse_ranking_output(doc, {"ranking": " ".join(map(str, consistent))})
    assert parsed == {"ranking": consistent, "ranked_labels": [-5, -4, -3, -2, -1, 1, 2, 3, 4, 5]}
    assert "error" in hooks.parse_ranking_output(doc, {"ranking": "1 2 3"})


def test_parse_ctp_ranks_by_log_likelihood_and_breaks_ties_by_display_order() -> None:
    doc = _with_generation()
    outputs = {hooks.label_key(label): float(label) for label in (-5, -4, -3, -2, -1, 1, 2, 3, 4, 5)}
    assert hooks.parse_ctp(doc, outputs)["ranked_labels"] == [-5, -4, -3, -2, -1, 1, 2, 3, 4, 5]
    ties = {key: -1.0 for key in outputs}
    # all tied: the order the ranking prompt would have shown, not the generation order
    assert hooks.parse_ctp(doc, ties)["ranked_labels"] == [5, -5, 1, -1, -4, 4, -3, 3, -2, 2]
    assert "NaN" in hooks.parse_ctp(doc, {**outputs, "+2": float("nan")})["error"]


def test_score() -> None:
    doc = _with_generation()
    doc["stages"]["ranking"] = {"parsed": {"ranked_labels": [-5, -4, -3, -2, -1, 1, 2, 3, 4, 5]}}
    assert hooks.score(doc)["tau_all"] == 1.0
    assert hooks.score(doc)["unparseable_ranking"] == 0.0
    # an undefined document says so: every consistency metric None there (counted), never a made-up value
    undefined = dict.fromkeys(("tau_supporters", "tau_defeaters", "tau_all", "cgp", "igc", "igc_density"))
    assert set(hooks.score(doc)) == {*undefined, "unparseable_generation", "unparseable_ranking"}
    doc["stages"]["ranking"] = {"parsed": {"error": "no ranking found"}}
    assert hooks.score(doc) == {**undefined, "unparseable_generation": 0.0, "unparseable_ranking": 1.0}
    doc["stages"] = {"generation": {"parsed": {"error": "x"}}}
    assert hooks.score(doc) == {**undefined, "unparseable_generation": 1.0, "unparseable_ranking": 0.0}


def test_explanations_after_the_ranking_do_not_compete_with_it() -> None:
    explained = "\n".join(f"{rank}. Argument {rank} is discussed here." for rank in range(1, 11))
    assert parse_ranking(f"Ranking: {SPACED}\n\nExplanation:\n{explained}", ARGUMENTS) == RANKING


def test_an_annotated_list_of_references_is_read_when_nothing_else_is_given() -> None:
    text = "\n".join(f"{rank}. Argument {n} (weakens the pair)" for rank, n in enumerate(RANKING, start=1))
    assert parse_ranking(text, ARGUMENTS) == RANKING


def test_an_echoed_argument_list_plus_a_different_ranking_is_ambiguous() -> None:
    echoed = "\n".join(f"{number}. {text}" for number, text in enumerate(ARGUMENTS, start=1))
    with pytest.raises(ParseError, match="2 different rankings"):
        parse_ranking(f"{echoed}\n\n{SPACED}", ARGUMENTS)


@pytest.mark.parametrize("text", ["In 2024 100 200 300 people voted.", "Scores: 3.5 4.5 6.5 7.5"])
def test_longer_numbers_are_not_read_as_indices(text: str) -> None:
    with pytest.raises(ParseError, match="no ranking found"):
        parse_ranking(text, ARGUMENTS)
