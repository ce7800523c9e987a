"""A later stage's prompts with every earlier answer at its generation bound (the plan's ``≤`` counts).

A later stage quotes what its document's earlier stages answered, which a plan does not have. This
module builds each document's later prompt with the task's own hook and formatting (system prompt,
chat template) from a stand-in record of each earlier stage: its raw outputs are a *marker*, its
parsed output the stage's own parse of them when that keeps the marker (fields taken from the
document stay exact), else each parsed field the hook asks for is the marker; the marker is then taken out of the prompt and each of its occurrences
counted at the earlier stage's ``max_gen_toks`` (a parsed field of an answer is at most the answer).
The count of a prompt is therefore ``tokens(prompt without the quoted answers) + Σ bound``: an upper
bound, up to the few tokens by which a tokenizer may join an answer to its neighbours differently
(checked on real answers by the tests). A hook that reads a structured field (a list, a mapping of
answers) cannot be rendered so: the stage is then ``None`` and the plan falls back to its estimate.
"""

from __future__ import annotations

from typing import Any

#: lm-eval's default generation length when a task sets none (``TemplateLM``'s ``max_gen_toks``).
DEFAULT_MAX_GEN_TOKS = 256
#: Tries of one render: each ``KeyError`` names one more parsed field the hook asks for.
MAX_FIELDS = 16
#: What stands for an earlier stage's answer (plain words, which a free-text parser keeps).
_MARK = "LCANSWERMARK{}X"


def _bound_of(stage: Any) -> int | None:
    """An earlier stage's generation bound in tokens (``None``: not a generation stage)."""
    if stage.output_type != "generate_until":
        return None
    return int(stage.generation_kwargs.get("max_gen_toks", DEFAULT_MAX_GEN_TOKS))


def _stand_in(task: Any, index: int, doc: dict[str, Any]) -> dict[str, Any] | None:
    """``doc`` with a stand-in record of each stage before ``index`` (``None``: one is not a generation)."""
    records: dict[str, Any] = {}
    for position, stage in enumerate(task.stages[:index]):
        if _bound_of(stage) is None:
            return None
        mark = _MARK.format(position)
        prompts = stage.render({**doc, "stages": dict(records)})
        outputs = dict.fromkeys(prompts, mark)
        records[stage.name] = {"prompts": prompts, "outputs": outputs, "parsed": _parsed(stage, doc, records, outputs)}
    return {**doc, "stages": records}


def _parsed(stage: Any, doc: dict[str, Any], records: dict[str, Any], outputs: dict[str, str]) -> dict[str, Any]:
    """The stage's own parse of the marker answers, when it keeps the marker (a free-text answer: the
    other fields it derives from the document stay exact); else empty (fields are filled on demand)."""
    if stage.parse is None:
        return {}
    try:
        parsed = dict(stage.parse({**doc, "stages": dict(records)}, outputs))
    except Exception:  # noqa: BLE001 -- any parser failure means: fill the fields on demand instead
        return {}
    mark = next(iter(outputs.values()), "")
    return parsed if "error" not in parsed and mark in repr(parsed) else {}


def _mark_missing_field(stand_in: dict[str, Any], error: KeyError, last: str, earlier: dict[str, int]) -> bool:
    """Add the field ``error`` names to the ``last`` earlier stage's parsed answer, as that stage's marker;
    ``False`` when it cannot be (not a field name, already there, or a stage name)."""
    field = error.args[0] if error.args else None
    parsed = stand_in["stages"][last]["parsed"]
    if not isinstance(field, str) or field in parsed or field in earlier:
        return False
    parsed[field] = _MARK.format(earlier[last])
    return True


def _render(task: Any, index: int, doc: dict[str, Any]) -> list[str] | None:
    """The later stage's formatted contexts for ``doc`` with markers for the earlier answers."""
    stand_in = _stand_in(task, index, doc)
    if stand_in is None:
        return None
    stage = task.stages[index]
    earlier = {s.name: position for position, s in enumerate(task.stages[:index])}
    last = task.stages[index - 1].name
    for _ in range(MAX_FIELDS):
        try:
            requests, _prompts = task._stage_requests(stage, stand_in, (task.config.task, 0, 1))
        except KeyError as error:
            if not _mark_missing_field(stand_in, error, last, earlier):
                return None
            continue
        except (TypeError, ValueError, IndexError, AttributeError):  # a structured field: not renderable so
            return None
        return list(dict.fromkeys(str(request.args[0]) for request in requests))
    return None


def bounded_prompts(task: Any, index: int, docs: list[dict[str, Any]]) -> list[tuple[str, int]] | None:
    """Each document's stage-``index`` contexts, markers taken out, with the tokens the quoted
    answers add at their bound (see the module docstring); ``None`` when the stage cannot be rendered so."""
    bounds = [_bound_of(stage) or 0 for stage in task.stages[:index]]
    out: list[tuple[str, int]] = []
    for doc in docs:
        contexts = _render(task, index, {k: v for k, v in doc.items() if k != "stages"})
        if contexts is None:
            return None
        for context in contexts:
            extra = sum(context.count(_MARK.format(p)) * bound for p, bound in enumerate(bounds))
            for position in range(len(bounds)):
                context = context.replace(_MARK.format(position), "")
            out.append((context, extra))
    return out
