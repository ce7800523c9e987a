"""An empty stop string means one thing on every backend (issue 54 item 6).

lm-eval 0.4.13 gives ``until=`` two meanings: stock ``hf``'s stopping criterion (``MultiTokenEOSCriteria``)
finds ``""`` in any text, so the generation ends after its first token, while ``postprocess_generated_text``
skips ``""`` and the API models send it to the endpoint; ``lc-hf``'s mixed batches skipped it and generated
on, two texts for one request. Now ``--gen_kwargs until=`` is refused by ``lm_eval`` itself on every backend,
in one line, before any model is built; a request that still carries one (a task's own ``generation_kwargs``
outside the suite) goes to ``HFLM``'s own path on ``lc-hf``, so both backends give the same text for it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tiny_model import CORPUS, tiny_base  # noqa: E402

from logic_consistency.harness_ext.prefix.scorer import PrefixSharingHFLM  # noqa: E402

#: Each backend of the suite and stock hf, with model arguments that would fail if a model were built.
BACKENDS = {
    "hf": "pretrained=/no/such/model",
    "lc-hf": "pretrained=/no/such/model",
    "lc-embedded": "model=smollm2-135m-instruct",
    "lc-chat": "base_url=http://127.0.0.1:1/v1,model=m",
}


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_lm_eval_refuses_an_empty_stop_string_on_every_backend_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], backend: str
) -> None:
    from lm_eval.__main__ import cli_evaluate

    monkeypatch.setattr(sys, "argv", ["lm_eval", "--model", backend, "--model_args", BACKENDS[backend],
                                      "--tasks", "logic_consistency_gv_arithmetic_generate", "--limit", "1",
                                      "--gen_kwargs", "until="])  # fmt: skip
    with pytest.raises(SystemExit) as exit_status:
        cli_evaluate()
    assert exit_status.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("lm_eval: error: lm_eval --gen_kwargs: until: an empty stop string ('')"), err[-3:]
    assert "refused on every backend" in err[-1]


@pytest.fixture(scope="module")
def lm(tmp_path_factory: pytest.TempPathFactory) -> PrefixSharingHFLM:
    base = tiny_base(tmp_path_factory.mktemp("tiny"))
    return PrefixSharingHFLM(pretrained=str(base), device="cpu", batch_size=4, dtype="float32")


def test_lc_hf_gives_stock_hfs_text_for_a_request_with_an_empty_stop(lm: PrefixSharingHFLM) -> None:
    """The same requests on ``HFLM.generate_until`` (stock ``hf``'s code, on the same object) and on ``lc-hf``'s
    ``generate_until`` (mixed batches): the same texts; an empty stop ends each of its rows after one token."""
    settings: list[dict[str, Any]] = [
        {"until": [""], "max_gen_toks": 12, "do_sample": False},
        {"until": ["", "\n"], "max_gen_toks": 12, "do_sample": False},
        {"until": ["\n"], "max_gen_toks": 12, "do_sample": False},
    ]
    asked = [Instance("generate_until", {}, (text[:40], dict(kwargs)), i)
             for i, (text, kwargs) in enumerate(zip(CORPUS * 2, settings * 2))]  # fmt: skip
    stock = HFLM.generate_until(lm, asked, disable_tqdm=True)
    assert lm.mixed_generation is True and lm.generate_until(asked, disable_tqdm=True) == stock
    # an empty stop ends its row after one token: its text is the one-token generation's (compared as text,
    # since a random tiny model's token may not re-encode to one token)
    one_token = [Instance("generate_until", {}, (r.args[0], {"until": ["\n"], "max_gen_toks": 1, "do_sample": False}), i)
                 for i, r in enumerate(asked)]  # fmt: skip
    first = HFLM.generate_until(lm, one_token, disable_tqdm=True)
    emptied = [i for i, request in enumerate(asked) if "" in request.args[1]["until"]]
    assert emptied and all(stock[i] == first[i] for i in emptied)
    assert any(len(stock[i]) > len(first[i]) for i in range(len(asked)) if i not in emptied)  # the others went on
