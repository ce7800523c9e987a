"""The prompts render as the paper's Figures 7 and 8 show (Cui et al., "Nuance Matters", Appendix B.2)."""

from __future__ import annotations

import pytest

from logic_consistency.tasks.causal import hooks
from logic_consistency.tasks.causal.prompts import (
    CONJUNCTIONS,
    combine_events,
    ctp_request,
    generation_prompt,
    ranking_prompt,
)

#: The figures' example: δ-CAUSAL training row 8515, quoted in the paper (fields as in the CSV).
EXAMPLE = {
    "id": "8515",
    "cause": "John wants to leave his current party which is democratic party",
    "effect_interval": "Months later,",
    "effect": "He becomes a strong member of the republican party",
    "defeater": "John changes his mind and runs on the Democratic ticket.",
    "supporter": "leaving the democratic party might imply a preference for an opposing party.",
    "display_order": list(range(10)),
}

#: Figure 7, the example prompt as printed.
FIGURE_7_EXAMPLE = (
    "Generate two supporters for the cause-effect relationship in which ‘John wants to leave his current party which "
    "is democratic party’ leads to ‘Months later, He becomes a strong member of the republican party’, without "
    "explanations, additional commentary, index or quotation marks. The two generated supporters vary in strength. "
    "More specifically, the first generated supporter should be stronger than the original supporter, while the "
    "second generated supporter should be stronger than the first supporter. Please ensure that the generated "
    "supporters are around 12 words in length. In addition, the generated stronger supporters should have similar "
    "style to the original supporter. The original supporter is: ‘leaving the democratic party might imply a "
    "preference for an opposing party.’. Make sure that there are no explanations or additional commentary for the "
    "output and that the generated arguments are separated by a new line character."
)

#: Figure 8, the example's ten arguments.
FIGURE_8_ARGUMENTS = [
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

#: Figure 8, the template as printed, with the example's values filled in (the arguments start on
#: their own line, as in the figure's example).
FIGURE_8_TEMPLATE_FILLED = (
    "Given a defeasible cause-effect pair and ten arguments with varying strength, please give a ranking of the "
    "arguments based on whether they strengthen or weaken the argumentative strength of the cause-effect pair. Note "
    "that the ten arguments consist of five supporting arguments and five defeating arguments. The ranking should be "
    "in the order from the argument that weakens the argumentative strength of the pair the most to the argument that "
    "strengthens the argumentative strength the most. In addition, please ensure that the result only contains "
    "indices referring to each argument, separated by a single space and without any additional explanation or "
    "comments. The cause is ‘John wants to leave his current party which is democratic party’ and the effect is "
    "‘Months later, He becomes a strong member of the republican party’. The ten arguments are:\n"
    + "\n".join(f"{number}. {text}" for number, text in enumerate(FIGURE_8_ARGUMENTS, start=1))
)


def test_generation_prompt_renders_figure_7_example_exactly() -> None:
    assert generation_prompt(EXAMPLE, "supporter", "stronger") == FIGURE_7_EXAMPLE


@pytest.mark.parametrize(
    ("name", "kind", "strength", "original", "words"),
    [
        ("weaker_defeaters", "defeater", "weaker", EXAMPLE["defeater"], 10),
        ("stronger_defeaters", "defeater", "stronger", EXAMPLE["defeater"], 10),
        ("weaker_supporters", "supporter", "weaker", EXAMPLE["supporter"], 12),
        ("stronger_supporters", "supporter", "stronger", EXAMPLE["supporter"], 12),
    ],
)
def test_the_four_generation_prompts_of_a_document(
    name: str, kind: str, strength: str, original: str, words: int
) -> None:
    prompt = hooks.generation_prompts(EXAMPLE)[name]
    expected = (
        FIGURE_7_EXAMPLE.replace("supporter", kind)
        .replace("stronger", strength)
        .replace("around 12 words", f"around {words} words")
        .replace(f"‘{EXAMPLE['supporter']}’", f"‘{original}’")
    )
    assert prompt == expected
    assert f"The original {kind} is: ‘{original}’." in prompt


def test_ranking_prompt_renders_figure_8_template() -> None:
    assert ranking_prompt(EXAMPLE, FIGURE_8_ARGUMENTS) == FIGURE_8_TEMPLATE_FILLED


def test_ranking_prompt_differs_from_figure_8_example_only_where_documented() -> None:
    printed_example = FIGURE_8_TEMPLATE_FILLED.replace(
        "weaken the argumentative strength of the cause-effect pair",
        "weaken the force of reasons of the cause-effect pair",
    ).replace("without any additional explanation", "without any addition explanation")
    rendered = ranking_prompt(EXAMPLE, FIGURE_8_ARGUMENTS)
    assert rendered != printed_example
    assert (
        rendered.replace("argumentative strength of the cause-effect", "force of reasons of the cause-effect").replace(
            "any additional", "any addition"
        )
        == printed_example
    )


def test_ranking_prompts_hook_shows_the_display_order() -> None:
    doc = {
        **EXAMPLE,
        "stages": {
            "generation": {
                "parsed": {
                    "intermediates": {
                        hooks.label_key(label): f"argument with label {label}"
                        for label in (-5, -4, -3, -2, -1, 1, 2, 3, 4, 5)
                    },
                    "shown_labels": [3, -1, 5, -5, 1, -2, 2, -3, 4, -4],
                }
            }
        },
    }
    prompt = hooks.ranking_prompts(doc)["ranking"]
    assert prompt.endswith(
        "The ten arguments are:\n1. argument with label 3\n2. argument with label -1\n3. argument with label 5\n"
        "4. argument with label -5\n5. argument with label 1\n6. argument with label -2\n7. argument with label 2\n"
        "8. argument with label -3\n9. argument with label 4\n10. argument with label -4"
    )


def test_shared_prefix_comes_first() -> None:
    # cache-friendly: every ranking prompt starts with the same instruction
    other = {**EXAMPLE, "cause": "Another cause.", "effect": "Another effect."}
    first, second = ranking_prompt(EXAMPLE, FIGURE_8_ARGUMENTS), ranking_prompt(other, FIGURE_8_ARGUMENTS)
    shared = len("Given a defeasible cause-effect pair")
    assert first[:shared] == second[:shared]
    assert first.index("The cause is") == second.index("The cause is")


# ----------------------------------------------------------------------------- Table 2 (CTP)
DOC = {
    "cause": "The family goes on a cultural tour of China.",
    "effect": "The family has a greater appreciation for Chinese people.",
}
INTERMEDIATE = "The tour guide ditches them."


@pytest.mark.parametrize(
    ("conjunction", "context"),
    [
        ("so", "The family goes on a cultural tour of China and the tour guide ditches them, so"),
        ("because", "Because the family goes on a cultural tour of China and the tour guide ditches them,"),
        ("since", "Since the family goes on a cultural tour of China and the tour guide ditches them,"),
        ("as", "As the family goes on a cultural tour of China and the tour guide ditches them,"),
        ("therefore", "The family goes on a cultural tour of China and the tour guide ditches them; therefore,"),
        ("thus", "The family goes on a cultural tour of China and the tour guide ditches them; thus,"),
        ("hence", "The family goes on a cultural tour of China and the tour guide ditches them; hence,"),
    ],
)
def test_ctp_request_places_the_conjunction_as_table_2(conjunction: str, context: str) -> None:
    request = ctp_request(DOC, INTERMEDIATE, conjunction)
    assert request == {"context": context, "continuation": "the family has a greater appreciation for Chinese people."}
    assert set(CONJUNCTIONS) == {"so", "because", "since", "as", "therefore", "thus", "hence"}


def test_names_keep_their_capital() -> None:
    assert combine_events("John leaves the party.", "John joins the republicans.") == (
        "John leaves the party and John joins the republicans"
    )
    assert ctp_request({"cause": "John leaves.", "effect": "He wins."}, "A rival quits!", "because")["context"] == (
        "Because John leaves and a rival quits,"
    )


def test_ctp_request_rejects_unknown_conjunction() -> None:
    with pytest.raises(ValueError, match="conjunction must be one of"):
        ctp_request(DOC, INTERMEDIATE, "for")


def test_generation_prompt_rejects_unknown_type() -> None:
    with pytest.raises(ValueError, match="argument_type"):
        generation_prompt(EXAMPLE, "assumption", "weaker")
    with pytest.raises(ValueError, match="strength"):
        generation_prompt(EXAMPLE, "defeater", "strongest")
