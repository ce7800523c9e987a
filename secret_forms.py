"""What a secret is, and the forms in which an endpoint may echo one (issue 39).

* **Not a secret**: a placeholder (:data:`PLACEHOLDERS`: empty, ``-``, ``none``, ``EMPTY``, ...) or a
  value shorter than :data:`MIN_SECRET_LENGTH` characters (:func:`is_placeholder`). Redacting it
  would rewrite every ``-`` or ``none`` of a results file (field and metric names included), so it is
  never used as a redaction pattern; :mod:`logic_consistency.credentials` says so in one line, and
  refuses a backend whose real key would be that short.
* **Echoed forms** of a secret, all redacted (:func:`literal_forms`, :class:`Echoes`); the one list
  of them is docs/api-judges.md#echoed-forms (keep it in step with :data:`FORMS`). No list is complete:
  an endpoint can always choose an encoding no redactor knows, which is why the board publishes no
  text of a run at all (issue 46).

Neutral: imports nothing of the suite (:mod:`logic_consistency.credentials` uses it).
"""

from __future__ import annotations

import base64
import html
import json
import re
import urllib.parse

__all__ = [
    "FORMS",
    "MIN_PART",
    "MIN_SECRET_LENGTH",
    "PLACEHOLDERS",
    "Echoes",
    "is_placeholder",
    "is_switch",
    "literal_forms",
]

#: A value shorter than this (stripped) is not a secret: too short to redact without garbling.
MIN_SECRET_LENGTH = 8
#: Any part of a secret this long or longer is redacted too (an echo cut at either end).
MIN_PART = 16
#: Values local servers document as "no key" (compared stripped, in lower case): never secrets. Among them
#: the documented keys of the common local servers (issue 54): LM Studio's ``lm-studio``, Ollama's ``ollama``,
#: vLLM's ``EMPTY``, llama.cpp's ``sk-no-key-required`` and ``no-key-required``.
PLACEHOLDERS = frozenset(
    {"", "-", "none", "null", "empty", "nokey", "no-key", "no_key", "dummy", "placeholder", "unused",
     "not-needed", "not-used", "sk-no-key-required", "no-key-required", "x", "xxx", "changeme", "test", "local",
     "lm-studio", "lmstudio", "ollama", "llama.cpp", "llamacpp", "llama-cpp", "vllm", "localai", "jan"}
)  # fmt: skip
#: What may split an echoed key: whitespace, zero-width characters, the soft hyphen, and an escaped
#: newline or tab (a body printed as its ``repr``: ``\\n`` is two characters there).
_SPLIT = "(?:[\\s\u200b\u200c\u200d\u2060\ufeff\u00ad]|\\\\[nrt]){0,8}"


def is_placeholder(value: str) -> bool:
    """Whether ``value`` is not a secret: a placeholder or shorter than :data:`MIN_SECRET_LENGTH`."""
    stripped = value.strip()
    return stripped.lower() in PLACEHOLDERS or len(stripped) < MIN_SECRET_LENGTH


#: Values of a named variable that are switches or counts, never keys (``OMP_NUM_THREADS: 1``).
_SWITCH = re.compile(r"^\s*(?:[-+]?[0-9]+(?:\.[0-9]+)?|true|false|yes|no|on|off|none)\s*$", re.IGNORECASE)


def is_switch(value: str) -> bool:
    """Whether ``value`` is a number or a yes/no word: a model list's ``env`` value never redacted."""
    return bool(_SWITCH.match(value))


#: The forms :func:`literal_forms` and :class:`Echoes` redact, as docs/api-judges.md#echoed-forms lists them.
FORMS = (
    "as written", "JSON-escaped", "percent-encoded (reserved characters, every byte, twice)",
    "\\u-escaped", "\\x-escaped", "HTML entities (decimal, hex)", "hex (also colon-separated)",
    "base64, base64url and base32 of its UTF-8 and UTF-16 bytes (at every alignment)", "fullwidth letters",
    "split by up to 8 whitespace, zero-width characters or escaped newlines (\\n, \\r, \\t)",
    "any part of 16 characters (of a shorter key: all but one character)",
)  # fmt: skip


def _cores(raw: bytes, encoders: tuple[object, ...], bits: int) -> set[str]:
    """The characters of ``raw``'s encodings (``bits`` per character) that depend on ``raw`` only, at
    each byte offset it may have inside a longer encoded text."""
    group = {6: 3, 5: 5}[bits]  # bytes per whole group of characters
    cores = set()
    for offset in range(group):
        first = -(-8 * offset // bits)  # the first character whose bits are all raw's
        last = (8 * (offset + len(raw)) - bits) // bits  # the last such character
        for encode in encoders:
            cores.add(encode(b"\0" * offset + raw).decode("ascii")[first : last + 1])  # type: ignore[operator]
    return cores


def _encoded_cores(value: str) -> set[str]:
    """base64, base64url and base32 cores of ``value``'s UTF-8 and UTF-16 bytes."""
    cores: set[str] = set()
    for raw in (value.encode("utf-8"), value.encode("utf-16-le"), value.encode("utf-16-be")):
        cores |= _cores(raw, (base64.b64encode, base64.urlsafe_b64encode), 6)
        cores |= _cores(raw, (base64.b32encode,), 5)
    return cores


def literal_forms(value: str) -> set[str]:
    """Every literal form of ``value`` that :class:`~logic_consistency.credentials.Redactor` replaces."""
    raw = value.encode("utf-8")
    quoted = urllib.parse.quote(value, safe="")
    forms = {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        quoted,
        urllib.parse.quote(quoted, safe=""),
        urllib.parse.quote_plus(value, safe=""),
        html.escape(value),
        "".join(f"&#{ord(char)};" for char in value),
        "".join(chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else char for char in value),
        *(
            "".join(pattern.format(byte) for byte in raw)
            for pattern in ("%{:02x}", "%{:02X}", "%25{:02X}", "\\x{:02x}", "\\x{:02X}", "&#x{:x};", "&#x{:X};")
        ),
        "".join(f"\\u{ord(char):04x}" for char in value),
        "".join(f"\\u{ord(char):04X}" for char in value),
        raw.hex(),
        raw.hex().upper(),
        raw.hex(":"),
        raw.hex(":").upper(),
        *_encoded_cores(value),
    }
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


class Echoes:
    """The non-literal echoes of one secret: split by whitespace or zero-width characters, or cut to
    any part of :data:`MIN_PART` or more characters (:meth:`sub`, linear in the text's length)."""

    def __init__(self, value: str) -> None:
        value = value.strip()
        self.split = re.compile(_SPLIT.join(re.escape(char) for char in value))
        size = min(MIN_PART, max(MIN_SECRET_LENGTH, len(value) - 1))  # a short key cut by one is still found
        self.parts = sorted({value[start : start + size] for start in range(len(value) - size + 1)})

    def sub(self, text: str, label: str) -> tuple[str, int]:
        """``text`` with every echo replaced by ``label``, and how many were."""
        text, count = self.split.subn(label, text)
        spans: list[tuple[int, int]] = []
        for part in (part for part in self.parts if part in text):
            start = text.find(part)
            while start >= 0:
                spans.append((start, start + len(part)))
                start = text.find(part, start + 1)
        if not spans:
            return text, count
        merged: list[list[int]] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        pieces, position = [], 0
        for start, end in merged:
            pieces += [text[position:start], label]
            position = end
        return "".join([*pieces, text[position:]]), count + len(merged)
