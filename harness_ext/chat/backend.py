"""``lc-chat`` declares itself: its lm-eval name, its class, its ``--model_args``, what a written file may
record of them, and the private lm-eval names :class:`~logic_consistency.harness_ext.chat.judge.ChatJudgeLM`
reaches (:class:`~logic_consistency.harness_ext.models.backend.Backend`).

Apart from ``judge.py`` so that reading the declaration (``logic-consistency options``, a model list's
check, the allowlist) imports no lm-eval. The names passed on to lm-eval's parent class are lm-eval
0.4.13's (``tests/harness_ext/test_model_args.py`` pins them against its signatures).
"""

from __future__ import annotations

from logic_consistency.harness_ext.models.args import _API_PASSED, _API_PUBLIC, Declaration
from logic_consistency.harness_ext.models.backend import Backend, LmEvalHook
from logic_consistency.options import Declared

__all__ = ["CHAT_ARGS", "DEFAULT_MAX_TOKENS", "DEFAULT_TIMEOUT", "LC_CHAT", "MAX_TOP_LOGPROBS"]

#: lc-chat's default ``max_tokens``: generated positions searched for a choice (the cost plan's bound too).
DEFAULT_MAX_TOKENS = 8
#: OpenAI's ceiling on ``top_logprobs``.
MAX_TOP_LOGPROBS = 20
#: lm-eval's default per-request ``timeout`` (seconds); lc-chat makes it a total deadline.
DEFAULT_TIMEOUT = 300

_KEY_HOME = "set the OPENAI_API_KEY environment variable (lm-eval sends it as the Bearer token)"

CHAT_ARGS = Declaration(
    where="lc-chat --model_args",
    declared=(
        Declared("top_logprobs", int, MAX_TOP_LOGPROBS, "top tokens listed per position (N)", 2, MAX_TOP_LOGPROBS),
        Declared("max_tokens", int, DEFAULT_MAX_TOKENS, "generated positions searched for a choice", 1, 4096),
        Declared("timeout", int, DEFAULT_TIMEOUT, "total seconds one request attempt may take", 1, 86_400),
        Declared("max_retries", int, 3, "attempts per request (a 429/500 or a timeout is retried)", 1, 100),
        Declared("num_concurrent", int, 1, "requests in flight at once", 1, 1024),
    ),
    passed=_API_PASSED,
    refused={"auth_token": _KEY_HOME, "api_key": _KEY_HOME},
    unknown="refuse",
    credentials=_KEY_HOME,
)

_BY = "chat.judge.ChatJudgeLM"

LC_CHAT = Backend(
    name="lc-chat",
    target="logic_consistency.harness_ext.chat.judge:ChatJudgeLM",
    args=CHAT_ARGS,
    public=_API_PUBLIC | {arg.name for arg in CHAT_ARGS.declared},
    hooks=(
        *(
            LmEvalHook(
                f"lm_eval.models.api_models:TemplateAPI.{attribute}",
                "reads",
                _BY,
                "lc-chat sends the run's seed and honours num_concurrent and batch_size like lm-eval's own chat backends",
                "public accessors for an API model's seed and concurrency",
            )
            for attribute in ("_seed", "_concurrent", "_batch_size")
        ),
        LmEvalHook(
            "lm_eval.models.openai_completions:LocalChatCompletion._create_payload",
            "overrides",
            _BY,
            "a judgement asks the endpoint for top_logprobs, so answer-choice probabilities can be read (lc-chat)",
            "log-likelihood requests answered from chat top_logprobs in lm-eval's chat backends",
        ),
    ),
)
