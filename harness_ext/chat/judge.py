"""``lc-chat``: lm-eval's ``local-chat-completions`` with answer-choice probabilities.

lm-eval's chat-completions backends refuse log-likelihood requests, but a judge needs P(A).
``lc-chat`` answers a log-likelihood request whose continuation is one answer choice (one word)
from the top log-probabilities of ONE greedy chat completion of its context, as PairS's authors do
(:mod:`logic_consistency.harness_ext.chat.choice_reading` states the matching rule): one call per
judgement, payload ``temperature: 0, logprobs: true, top_logprobs: N, max_tokens: M``. Any other
log-likelihood request is refused before any call, naming its task (:meth:`ChatJudgeLM.check_tasks`).

Its model arguments and lm-eval hooks are declared in :mod:`logic_consistency.harness_ext.chat.backend`. Every request goes
through :mod:`logic_consistency.harness_ext.chat.reply`; lm-eval keeps the retries, concurrency, the
API key (``OPENAI_API_KEY``) and ``--use_cache``, so a request ends within ``max_retries * (timeout
+ 10)`` seconds. The model name each reply reports is recorded as ``config.reported_models``; missing
choices and ties are logged and counted (``n_choices_missing``). See docs/api-judges.md.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, cast

from lm_eval.api.instance import Instance
from lm_eval.models.api_models import LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER, JsonChatStr
from lm_eval.models.openai_completions import LocalChatCompletion

from logic_consistency.credentials import redact, register_header, url_origin
from logic_consistency.harness_ext.chat.backend import DEFAULT_MAX_TOKENS, LC_CHAT, MAX_TOP_LOGPROBS
from logic_consistency.harness_ext.chat.choice_reading import (
    ChoiceAnswer,
    ReadingError,
    is_single_choice,
    read_choices,
)
from logic_consistency.harness_ext.chat.reply import logprob_content, post, post_once, ssl_setting
from logic_consistency.harness_ext.chat.waves import send_in_waves

# A child of lm-eval's logger, so the reading summaries show at lm-eval's verbosity with its messages.
eval_logger = logging.getLogger("lm_eval.models.lc_chat")

__all__ = ["MAX_TOP_LOGPROBS", "ChatJudgeLM", "ChoiceRequestError"]

_OTHER_BACKENDS = "Run this task on a backend with log-likelihoods (lc-hf, hf, vllm, local-completions)"


class ChoiceRequestError(ValueError):
    """A log-likelihood request ``lc-chat`` cannot answer from a chat completion."""


#: Per context, lm-eval's arguments ``(context, continuation)`` of each of its requests (what the cache keys).
_RequestArgs = list[list[tuple[Any, str]]]


def _group_by_context(requests: Sequence[Instance]) -> dict[str, list[int]]:
    """Indices of ``requests`` per distinct context (its chat-message JSON), after checking each.

    Raises:
        ChoiceRequestError: A context is not chat messages, or a continuation is not one word;
            the message names the task.
    """
    groups: dict[str, list[int]] = {}
    for index, request in enumerate(requests):
        context, continuation = request.args[0], request.args[1]
        task = request.task_name or "(unnamed task)"
        if not isinstance(context, JsonChatStr):
            raise ChoiceRequestError(
                f"lc-chat: task {task!r} sent a plain-text context; a chat endpoint needs chat messages: "
                "run with --apply_chat_template"
            )
        if not is_single_choice(continuation):
            raise ChoiceRequestError(
                f"lc-chat: task {task!r} asks for the log-likelihood of {continuation!r}; lc-chat reads only "
                "one-word answer choices (answer letters, True/False) from a chat completion's top "
                f"log-probabilities, and a chat endpoint scores no longer continuation. {_OTHER_BACKENDS}"
            )
        groups.setdefault(context.prompt, []).append(index)
    for indices in groups.values():
        keys = [str(requests[i].args[1]).strip() for i in indices]
        if len(set(keys)) != len(keys):
            task = requests[indices[0]].task_name
            raise ChoiceRequestError(f"lc-chat: task {task!r} asks one context for the same choice twice: {keys}")
    return groups


def _reading_key(requests: Sequence[Instance], prompt: str, indices: list[int]) -> tuple[str, tuple[str, ...]]:
    """What a context's reading is remembered by in a run: its messages and the choices asked of it."""
    return prompt, tuple(str(requests[i].args[1]) for i in indices)


def _answers_in_request_order(
    count: int, groups: list[tuple[str, list[int]]], readings: list[list[ChoiceAnswer]]
) -> list[tuple[float, bool]]:
    """Each request's answer, from the reading of its context (one per group, in the groups' order)."""
    out: list[tuple[float, bool]] = [(0.0, False)] * count
    for (_, indices), reading in zip(groups, readings, strict=True):
        for index, answer in zip(indices, reading, strict=True):
            out[index] = answer
    return out


def _refusal(task: Any) -> str | None:
    """Why lc-chat cannot serve ``task``, from what the task declares before any request is built."""
    declared = getattr(task, "loglikelihood_continuations", None)
    if not callable(declared):
        return None
    name = getattr(getattr(task, "config", None), "task", None) or type(task).__name__
    for stage, choices in declared().items():
        if choices is None:
            return (
                f"lc-chat: task {name!r} scores, in its stage {stage!r}, continuations built from each "
                "document (whole sentences), not one-word answer choices; lc-chat reads only one-word "
                f"choices from a chat completion's top log-probabilities. Refused before any call. {_OTHER_BACKENDS}"
            )
        if not all(is_single_choice(choice) for choice in choices):
            return f"lc-chat: task {name!r} stage {stage!r} has choices {list(choices)} of several words. {_OTHER_BACKENDS}"
    return None


class ChatJudgeLM(LocalChatCompletion):  # type: ignore[misc]  # lm-eval ships no type information
    """``local-chat-completions`` that answers one-word-choice log-likelihood requests (module doc)."""

    #: Tasks may check this (through ``--use_cache``'s wrapper too) to know answers are readings.
    reads_choices_from_top_logprobs = True

    def __init__(self, **kwargs: Any) -> None:
        kwargs = LC_CHAT.check(kwargs)
        self.top_logprobs: int = kwargs.pop("top_logprobs", MAX_TOP_LOGPROBS)
        self.max_tokens: int = kwargs.pop("max_tokens", DEFAULT_MAX_TOKENS)
        if not kwargs.get("base_url"):
            raise ValueError("lc-chat: base_url is required (the full .../v1/chat/completions URL)")
        super().__init__(**kwargs)
        register_header(self.header, "the lc-chat credential")  # redacted in every output (a placeholder key is none)
        # Readings already made in this process, by (context, choices): a greedy reading is
        # deterministic, so a context another task already asked (PairS rounds ask the pairwise
        # task's prompts) is answered from memory, never sent twice.
        self._readings: dict[tuple[str, tuple[str, ...]], list[ChoiceAnswer]] = {}
        #: Model names the endpoint's replies reported, with how many replies reported each.
        self.reported_models: Counter[str] = Counter()

    # ------------------------------------------------------------------ before any call
    def check_tasks(self, tasks: Iterable[Any]) -> None:
        """Refuse, before any call, a task whose log-likelihood requests lc-chat cannot read.

        Raises:
            ChoiceRequestError: Naming the task and its stage.
        """
        for task in tasks:
            if (reason := _refusal(task)) is not None:
                raise ChoiceRequestError(reason)

    def get_model_info(self) -> dict[str, Any]:
        """Added by lm-eval to the results' ``config``: the model names the endpoint reported."""
        return {"reported_models": sorted(self.reported_models)}

    # ------------------------------------------------------------------ payloads
    # lm-eval hook: overrides a private upstream method; declared in chat/backend.py (LC_CHAT.hooks), pinned with lm_eval_hooks.LM_EVAL_HOOKS.
    def _create_payload(
        self,
        messages: Any,
        generate: bool = False,
        gen_kwargs: dict[str, Any] | None = None,
        seed: int = 1234,
        eos: str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        if generate:
            return cast(
                dict[str, Any],
                super()._create_payload(messages, generate=True, gen_kwargs=gen_kwargs, seed=seed, eos=eos, **kwargs),
            )
        return {
            "messages": messages,
            "model": self.model,
            "max_tokens": self.max_tokens,
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
            "seed": seed,
        }

    def parse_logprobs(
        self, outputs: Any, tokens: Any = None, ctxlens: Any = None, **kwargs: Any
    ) -> list[list[ChoiceAnswer]]:
        """One reading per completion; ``ctxlens`` carries each call's choices (see ``amodel_call``)."""
        outputs = outputs if isinstance(outputs, list) else [outputs]
        readings = []
        for output, choices in zip(outputs, ctxlens, strict=True):
            content = logprob_content(output, url=self.base_url)
            try:
                readings.append(read_choices(content, choices))
            except ReadingError as error:
                raise ReadingError(f"lc-chat: the reply of base_url={url_origin(self.base_url)}: {error}") from None
        return readings

    def _note_model(self, reply: dict[str, Any]) -> None:
        """Count the model name a reply reports; log a new one, warning when it is not the one asked."""
        name = reply.get("model")
        if not isinstance(name, str):
            return
        if name not in self.reported_models:
            asked = str(self.model or "")
            if asked and not name.startswith(asked):
                eval_logger.warning(
                    "lc-chat: base_url=%s answers as model %r, not the %r asked for",
                    url_origin(self.base_url),
                    name,
                    asked,
                )
            else:
                eval_logger.info("lc-chat: base_url=%s answers as model %r", url_origin(self.base_url), name)
        self.reported_models[name] += 1

    # ------------------------------------------------------------------ transport (chat_reply)
    def model_call(
        self, messages: Any, *, generate: bool = True, gen_kwargs: dict[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """One request without concurrency, within the total deadline (lm-eval retries it)."""
        payload = self._create_payload(
            self.create_message(messages),
            generate=generate,
            gen_kwargs=copy.deepcopy(gen_kwargs),
            seed=self._seed,
            eos=self.eos_string,
            **kwargs,
        )
        reply = post_once(self.base_url, payload, headers=self.header, timeout=self.timeout, ssl_context=self._ssl)
        self._note_model(reply)
        return reply

    @property
    def _ssl(self) -> Any:
        return ssl_setting(self.verify_certificate, self.ca_cert_path)

    async def amodel_call(
        self,
        session: Any,
        sem: Any,
        messages: Any,
        *,
        generate: bool = True,
        cache_keys: Any = None,
        ctxlens: Any = None,
        gen_kwargs: Any = None,
        **kwargs: Any,
    ) -> Any:
        """lm-eval's concurrent call (which lm-eval retries); for a reading, ``cache_keys`` holds the requests' arguments.

        A reading answers every choice of its context, so it is cached here, one entry per request,
        as it returns; a generation is cached as lm-eval does.
        """
        async with sem:
            return await self._send(
                session,
                messages,
                generate=generate,
                cache_keys=cache_keys,
                ctxlens=ctxlens,
                gen_kwargs=gen_kwargs,
                **kwargs,
            )

    async def _send(
        self,
        session: Any,
        messages: Any,
        *,
        generate: bool,
        cache_keys: Any,
        ctxlens: Any,
        gen_kwargs: Any = None,
        **kwargs: Any,
    ) -> Any:
        """One attempt of one call: post, read the reply, cache its answers."""
        payload = self._create_payload(
            self.create_message(messages),
            generate=generate,
            gen_kwargs=copy.deepcopy(gen_kwargs),
            seed=self._seed,
            **kwargs,
        )
        reply = await post(
            session, self.base_url, payload, headers=self.header, timeout=self.timeout, ssl_context=self._ssl
        )
        self._note_model(reply)
        if not generate:
            readings = self.parse_logprobs(reply, ctxlens=ctxlens)
            for reading, arguments in zip(readings, cache_keys, strict=True):
                self._cache(arguments, reading)
            return readings
        answers = [
            LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER if a is None else a for a in self.parse_generations(outputs=reply)
        ]
        for answer, key in zip(answers, cache_keys or [], strict=False):
            self.cache_hook.add_partial("generate_until", key, answer)
        return answers

    async def get_batched_requests(
        self,
        requests: list[Any],
        cache_keys: list[Any],
        *,
        generate: bool = True,
        ctxlens: list[Any] | None = None,
        **kwargs: Any,
    ) -> list[Any]:
        """lm-eval's concurrent calls, but a bad reply costs at most one wave (:mod:`.waves`)."""
        return await send_in_waves(
            self._send,
            requests,
            cache_keys,
            ctxlens or [None] * len(requests),
            concurrent=self._concurrent,
            batch_size=self._batch_size,
            max_retries=self.max_retries,
            call_kwargs={"generate": generate, **kwargs},
        )

    def _cache(self, arguments: Sequence[tuple[Any, str]], reading: Sequence[ChoiceAnswer]) -> None:
        for args, answer in zip(arguments, reading, strict=True):
            self.cache_hook.add_partial("loglikelihood", args, answer)

    def _read_sequentially(
        self, contexts: list[JsonChatStr], choices: list[list[str]], arguments: _RequestArgs, disable_tqdm: bool
    ) -> list[list[ChoiceAnswer]]:
        from tenacity import retry, stop_after_attempt, wait_exponential
        from tqdm import tqdm

        call = retry(
            stop=stop_after_attempt(self.max_retries),
            wait=wait_exponential(multiplier=0.5, min=1, max=10),
            reraise=True,
        )(self.model_call)
        readings = []
        for context, wanted, args in tqdm(
            list(zip(contexts, choices, arguments, strict=True)), desc="Reading choices", disable=disable_tqdm
        ):
            reading = self.parse_logprobs(call(messages=[context], generate=False), ctxlens=[wanted])[0]
            self._cache(args, reading)
            readings.append(reading)
        return readings

    def _endpoint_error(self, error: BaseException) -> RuntimeError:
        return RuntimeError(
            redact(
                f"lc-chat: the chat endpoint base_url={url_origin(self.base_url)} gave no usable answer after "
                f"max_retries={self.max_retries} attempts: {type(error).__name__}: {error}"
            )
        )

    def _read_contexts(
        self, contexts: list[JsonChatStr], choices: list[list[str]], arguments: _RequestArgs, disable_tqdm: bool
    ) -> list[list[ChoiceAnswer]]:
        """One reading per context: one call at a time, or lm-eval's concurrent waves; a failure names the endpoint."""
        try:
            if self._concurrent <= 1:
                return self._read_sequentially(contexts, choices, arguments, disable_tqdm)
            calls = asyncio.run(self.get_batched_requests(contexts, arguments, generate=False, ctxlens=choices))
            return [reading for call in calls for reading in call]
        except ValueError:
            raise
        except Exception as error:
            raise self._endpoint_error(error) from error

    def _read_new(
        self,
        requests: Sequence[Instance],
        groups: list[tuple[str, list[int]]],
        keys: list[tuple[str, tuple[str, ...]]],
        new: list[int],
        disable_tqdm: bool,
    ) -> list[list[ChoiceAnswer]]:
        """Read the contexts ``new`` (positions in ``groups``) not read earlier in the run, and remember them."""
        readings = self._read_contexts(
            [requests[groups[n][1][0]].args[0] for n in new],
            [list(keys[n][1]) for n in new],
            [[requests[i].args for i in groups[n][1]] for n in new],
            disable_tqdm,
        )
        for n, reading in zip(new, readings, strict=True):
            self._readings[keys[n]] = reading
        return readings

    # ------------------------------------------------------------------ requests
    def loglikelihood(self, requests: list[Instance], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        """Answer one-word-choice requests from one greedy completion per distinct context."""
        if not requests:
            return []
        groups = list(_group_by_context(requests).items())
        keys = [_reading_key(requests, prompt, indices) for prompt, indices in groups]
        new = [n for n, key in enumerate(keys) if key not in self._readings]
        readings = self._read_new(requests, groups, keys, new, disable_tqdm)
        out = _answers_in_request_order(len(requests), groups, [self._readings[key] for key in keys])
        if len(new) < len(keys):
            eval_logger.info(
                "lc-chat: %d of %d contexts answered from earlier in this run", len(keys) - len(new), len(keys)
            )
        if readings:
            self._log_readings(readings)
        return out

    def _log_readings(self, readings: list[list[ChoiceAnswer]]) -> None:
        answers = [answer for reading in readings for answer in reading]
        positions = Counter(reading[0].position for reading in readings)
        missing = sum(answer.missing for answer in answers)
        ties = sum(reading[0].tied for reading in readings)
        log = eval_logger.warning if missing or ties else eval_logger.info
        log(
            "lc-chat: read %d contexts (%d choices) at generated positions %s; %d choices missing from "
            "the top %d (probability 0), %d readings tied",
            len(readings),
            len(answers),
            dict(sorted(positions.items())),
            missing,
            self.top_logprobs,
            ties,
        )

    def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:  # noqa: D102
        try:
            return cast(list[str], super().generate_until(requests, disable_tqdm=disable_tqdm))
        except (AssertionError, ValueError):
            raise
        except Exception as error:
            raise self._endpoint_error(error) from error
