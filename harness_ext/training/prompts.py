"""Training examples formatted as the evaluation formats its requests.

With ``--apply_chat_template`` lm-eval's hf backend renders a prompt as the tokenizer's chat template of
one user message with the generation prompt added, and a scored continuation follows with no
delimiter; without it the prompt is the task's text and a scored answer follows the task's
``target_delimiter`` (a space). A generated answer follows the prompt as it was generated.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .libraries import training_libraries
from .trainer import Example

__all__ = ["format_examples"]


def format_examples(
    base: Path, pairs: Iterable[tuple[str, str, bool]], *, chat_template: bool, delimiter: str = " "
) -> list[Example]:
    """``(task prompt, answer, scored)`` triples as :class:`Example` s, prompts formatted as lm-eval does.

    ``scored``: the answer is a scored continuation (an option letter, ``True``), which gets the
    delimiter when no chat template applies; a generated answer never does.
    """
    tokenizer = None
    if chat_template:
        _, transformers, _ = training_libraries()
        tokenizer = transformers.AutoTokenizer.from_pretrained(base)
    examples = []
    for prompt, answer, scored in pairs:
        if tokenizer is not None:
            text = tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
            )
            examples.append(Example(str(text), answer))
        else:
            examples.append(Example(prompt, f"{delimiter}{answer}" if scored else answer))
    return examples
