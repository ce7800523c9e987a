"""Every backend's ``--model_args`` are checked from its declaration before anything is loaded or called."""

from __future__ import annotations

import inspect

import pytest

from logic_consistency.harness_ext.backends.registry import backend_args, check_model_args
from logic_consistency.harness_ext.chat.backend import CHAT_ARGS
from logic_consistency.harness_ext.prefix.backend import EMBEDDED_ARGS, HF_ARGS
from logic_consistency.options import OptionError, OptionTypeError

URL = "http://127.0.0.1:9/v1/chat/completions"


@pytest.mark.parametrize(
    ("model", "args", "match"),
    [
        ("lc-chat", f"base_url={URL},max_token=1", "unknown argument 'max_token'; did you mean 'max_tokens'"),
        ("lc-chat", f"base_url={URL},top_logprob=5", "did you mean 'top_logprobs'"),
        ("lc-chat", f"base_url={URL},colour=red", r"unknown argument 'colour'; known: \["),
        ("lc-chat", f"base_url={URL},top_logprobs=1", "top_logprobs must be at least 2, got 1"),
        ("lc-chat", f"base_url={URL},top_logprobs=21", "top_logprobs must be at most 20"),
        ("lc-chat", f"base_url={URL},timeout=0", "timeout must be at least 1"),
        ("lc-chat", f"base_url={URL},max_tokens=eight", "max_tokens must be an integer, got 'eight'"),
        ("lc-hf", "pretrained=x,min_shared_token=8", "did you mean 'min_shared_tokens'"),
        ("lc-hf", "pretrained=x,dtyp=float32", "did you mean 'dtype'"),
        ("lc-hf", "pretrained=x,prefix_sharing=maybe", "prefix_sharing must be true or false"),
        ("lc-embedded", "model=gemma-3-27m", "model must be one of .*did you mean 'gemma-3-270m'"),
        ("lc-embedded", "pretrained=x", "pretrained is refused: lc-embedded takes model=<name>"),
        ("lc-embedded", "max_cached_prefixes=0", "max_cached_prefixes must be at least 1"),
    ],
)
def test_typos_and_bad_values_are_errors_naming_the_closest_argument(model: str, args: str, match: str) -> None:
    with pytest.raises(OptionError, match=match) as raised:
        check_model_args(model, args)
    assert str(raised.value).startswith(f"{model} --model_args: ")


@pytest.mark.parametrize("name", ["api_key", "auth_token", "openai_api_key", "key", "bearer_token", "password"])
def test_credentials_in_lc_chat_model_args_are_refused_saying_where_the_key_belongs(name: str) -> None:
    with pytest.raises(OptionError, match=f"{name} is refused: .*OPENAI_API_KEY environment variable") as raised:
        check_model_args("lc-chat", f"base_url={URL},{name}=sk-SECRET")
    assert "sk-SECRET" not in str(raised.value)


@pytest.mark.parametrize(
    ("model", "args"),
    [
        # lm-eval's own arguments pass through to the parent class
        ("lc-chat", f"base_url={URL},model=m,num_concurrent=4,max_retries=2,timeout=30,tokenizer_backend=none"),
        ("lc-chat", f"base_url={URL},batch_size=1,max_gen_toks=64,seed=3,think_end_token=</think>,top_logprobs=2"),
        ("lc-hf", "pretrained=x,dtype=float32,batch_size=4,device=cpu,prefix_sharing=false,min_shared_tokens=16"),
        # transformers' own from_pretrained keywords are not the suite's to refuse
        ("lc-hf", "pretrained=x,attn_implementation=eager,low_cpu_mem_usage=true"),
        ("lc-embedded", "model=gemma-3-270m,batch_size=8,prefix_sharing=true"),
        ("hf", "pretrained=x,anything=goes"),  # not the suite's backend: lm-eval's to check
    ],
)
def test_valid_arguments_pass(model: str, args: str) -> None:
    check_model_args(model, args)


def test_a_value_of_the_wrong_type_is_a_type_error_too() -> None:
    with pytest.raises(OptionTypeError):
        check_model_args("lc-chat", f"base_url={URL},num_concurrent=true")


def test_declarations_pass_on_exactly_lm_evals_parameters() -> None:
    """Pins the names passed on against lm-eval's signatures: an upgrade that renames one fails here."""
    from lm_eval.models.api_models import TemplateAPI
    from lm_eval.models.huggingface import HFLM
    from lm_eval.models.openai_completions import LocalChatCompletion

    def parameters(*classes: type) -> set[str]:
        return {
            name
            for cls in classes
            for name, p in inspect.signature(cls.__init__).parameters.items()
            if name != "self" and p.kind is not p.VAR_KEYWORD
        }

    declared = {arg.name for arg in CHAT_ARGS.declared}
    api = parameters(TemplateAPI, LocalChatCompletion) - {"auth_token"}  # refused: a credential
    assert CHAT_ARGS.passed | declared == api | {"device", "max_batch_size"} | {"top_logprobs", "max_tokens"}
    assert HF_ARGS.passed == parameters(HFLM)


def test_embedded_choices_are_the_embedded_models() -> None:
    from logic_consistency.harness_ext.models.embedded import EMBEDDED_MODELS

    (model,) = [arg for arg in EMBEDDED_ARGS.declared if arg.name == "model"]
    assert backend_args("lc-embedded") is EMBEDDED_ARGS
    assert set(model.choices or ()) == set(EMBEDDED_MODELS)
