"""Check the Markdown docs against the code without running a model (used by ``tests/test_docs.py``).

Every fenced shell block (bash, sh, console, shell) is split into commands (line continuations
joined, comments, ``VAR=value`` prefixes and pipes or ``&&`` dropped); then:

* ``lm_eval`` (or ``lm-eval``, ``python -m lm_eval``) arguments must parse with lm-eval's own
  command-line parser, every flag spelled exactly as lm-eval declares it;
* ``logic-consistency`` arguments must parse with the suite's parser (``cli.build_parser``);
* every ``--tasks`` name must be in lm-eval's task index (the suite's folder, then lm-eval's own
  tasks) and every ``--model`` name in lm-eval's model registry (the suite's models included);
* every repository path a command or an inline code span names, and every relative link
  (``[text](path#anchor)``, anchors included) must exist;
* every install line, in a shell block or in inline code, must work from a clone in the environment
  ``scripts/setup.sh`` makes or in the reader's own: ``bash scripts/setup.sh EXTRA`` names extras that
  setup.sh takes; ``pip install`` / ``uv pip install`` names no package that no index has
  (``logic-consistency``: from a clone, ``-e .``), only setup.cfg's extras after ``-e .``, and a
  package that setup.cfg pins at setup.cfg's version; none runs the pip of ``.venv``, which setup.sh
  makes without pip. (Installing is too slow for the tests: CI's ``bash scripts/setup.sh test`` runs
  the real one.)

A word with ``<...>`` or ``...`` in it is a placeholder: it is not checked.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

SHELL_LANGUAGES = {"bash", "sh", "console", "shell"}
#: The documents checked, relative to the repository root.
DOC_GLOBS = (
    "README.md",
    "CONTRIBUTING.md",
    "CHANGELOG.md",
    "leaderboard/README.md",
    "tasks/**/README.md",
    "docs/**/*.md",
)
PLACEHOLDER = re.compile(r"<[^<>]*>|\.\.\.")
#: What a placeholder word is parsed as (its value is not checked).
PLACEHOLDER_VALUE = "placeholder"
_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
#: A here-document (``cat > f <<'EOF'``): its lines up to the delimiter are a file's text, not commands.
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_OPERATORS = {"|", "||", "&&", ";", "&"}
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|^\s*\[[^\]]+\]:\s*(\S+)")
#: A section named in prose: ``README, "Reading the results"`` or ``cluster.md's "Shards"``.
_SECTION_REFERENCE = re.compile(r"\b(README|[\w./-]+\.md)(?:'s)?,?\s+\"([^\"]+)\"")
_CODE_SPAN = re.compile(r"(?<!`)`([^`\s]+)`(?!`)")
_TASK_NAME = re.compile(r"^logic_consistency[a-z0-9_{},]*$")
#: An install line in inline code: ``pip install -e '.[api]'``, ``bash scripts/setup.sh train``.
_INSTALL_SPAN = re.compile(
    r"`((?:[\w./-]*pip3?|[\w./-]*uv pip|python3? -m pip) install [^`]+|bash scripts/setup\.sh[^`]*)`"
)
_REQUIREMENT = re.compile(r"^([A-Za-z0-9_.-]*)(?:\[([^\]]*)\])?(.*)$")
#: pip options that take a value (the value is not a requirement).
_PIP_VALUED = {"--python", "-r", "--requirement", "-c", "--constraint", "--target", "-t", "--find-links", "-f",
               "--index-url", "-i", "--extra-index-url", "--prefix", "--root"}  # fmt: skip
_PATH_SUFFIXES = {".py", ".sh", ".yaml", ".yml", ".json", ".md", ".html", ".js", ".css", ".toml", ".cfg", ".txt"}
#: Scripts that pass their extra arguments on to another command.
SCRIPT_FORWARDS = {
    "scripts/quickstart.sh": ["lm_eval", "run"],
    "scripts/leaderboard.sh": ["logic-consistency", "leaderboard", "build"],
}


@dataclass(frozen=True)
class Command:
    """One shell command of a doc: where it starts and its words (environment prefixes dropped)."""

    path: Path
    line: int
    words: list[str]

    def where(self) -> str:
        return f"{self.path}:{self.line}"


def doc_files(root: Path) -> list[Path]:
    """The Markdown files checked (an absent folder gives none)."""
    return sorted({path for pattern in DOC_GLOBS for path in root.glob(pattern) if path.is_file()})


def shell_blocks(text: str) -> Iterator[tuple[int, str, list[str]]]:
    """``(line of the first content line, language, lines)`` of every fenced block."""
    fence, language, start, lines = "", "", 0, []
    for number, line in enumerate(text.split("\n"), 1):
        match = _FENCE.match(line)
        if not fence and match:
            fence, language, start, lines = match.group(1), match.group(2).lower(), number + 1, []
        elif fence and line.strip().startswith(fence) and not line.strip().strip(fence[0]):
            yield start, language, lines
            fence = ""
        elif fence:
            lines.append(line)


def _logical_lines(start: int, language: str, lines: list[str]) -> Iterator[tuple[int, str]]:
    """Lines with continuations joined; in a console block with ``$`` prompts, only the prompted lines.

    A here-document's body is skipped (it is the text of a file, not commands).
    """
    prompted = language == "console" and any(line.lstrip().startswith("$ ") for line in lines)
    pending, first, heredoc = "", start, ""
    for number, line in enumerate(lines, start):
        if heredoc:
            heredoc = "" if line.strip() == heredoc else heredoc
            continue
        if not pending:
            if prompted and not line.lstrip().startswith("$ "):
                continue
            first = number
            line = line.lstrip()[2:] if prompted else line
        pending += line
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        yield first, pending
        match = _HEREDOC.search(pending)
        heredoc = match.group(2) if match else ""
        pending = ""
    if pending:
        yield first, pending


def _words(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split, lexer.commenters = True, ""
    words = list(lexer)
    comment = next((i for i, word in enumerate(words) if word.startswith("#")), len(words))
    return words[:comment]


def commands(path: Path, text: str) -> Iterator[Command]:
    """Every command of the file's shell blocks."""
    for start, language, lines in shell_blocks(text):
        if language not in SHELL_LANGUAGES:
            continue
        for number, line in _logical_lines(start, language, lines):
            words: list[str] = []
            for word in [*_words(line), ";"]:
                if word not in _OPERATORS:
                    words.append(word)
                    continue
                while words and _ENV.match(words[0]):
                    words.pop(0)
                if words:
                    yield Command(path, number, words)
                words = []


def _expand_braces(word: str) -> list[str]:
    match = re.match(r"^(.*?)\{([^{}]*)\}(.*)$", word)
    if not match:
        return [word]
    head, options, tail = match.groups()
    return [name for option in options.split(",") for name in _expand_braces(head + option + tail)]


def _placeholder(word: str) -> bool:
    return bool(PLACEHOLDER.search(word))


@dataclass
class Checker:
    """The parsers, the task index and the model registry, each built once, and the checks."""

    root: Path
    #: Paths the docs name that are not files of this repository (an example to create, another project's file).
    not_ours: frozenset[str] = frozenset()
    #: Task names an example of the docs creates (with ``--include_path``): not in the suite's index.
    example_tasks: frozenset[str] = frozenset()
    #: Install lines quoted as what fails (a troubleshooting row), not as what to run.
    symptoms: frozenset[str] = frozenset()
    problems: list[str] = field(default_factory=list)
    _full_index: set[str] | None = None

    @cached_property
    def lm_eval_parser(self) -> argparse.ArgumentParser:
        from lm_eval._cli import HarnessCLI

        return HarnessCLI()._parser

    @cached_property
    def suite_parser(self) -> argparse.ArgumentParser:
        from logic_consistency.cli import build_parser

        return build_parser()

    @cached_property
    def suite_tasks(self) -> set[str]:
        from lm_eval.tasks import TaskManager

        from logic_consistency.harness_ext.autoload import tasks_dir

        return set(TaskManager(include_path=str(tasks_dir()), include_defaults=False).all_tasks)

    def task_known(self, name: str) -> bool:
        """In the suite's index, else in lm-eval's full index (built only when needed, ~7 s)."""
        if name in self.suite_tasks or name in self.example_tasks:
            return True
        if self._full_index is None:
            from lm_eval.tasks import TaskManager

            self._full_index = set(TaskManager().all_tasks)
        return name in self._full_index

    @cached_property
    def models(self) -> Any:
        import lm_eval.models  # noqa: F401  (the suite's registrations run on this import)
        from lm_eval.api.registry import model_registry

        return model_registry

    @cached_property
    def extras(self) -> set[str]:
        """The extras setup.cfg declares."""
        import configparser

        config = configparser.ConfigParser()
        config.read(self.root / "setup.cfg", encoding="utf-8")
        return set(config["options.extras_require"]) if config.has_section("options.extras_require") else set()

    @cached_property
    def setup_sh_extras(self) -> set[str]:
        """The extras ``scripts/setup.sh`` takes (its ``extras="..."`` line)."""
        script = self.root / "scripts" / "setup.sh"
        found = re.search(r'^extras="([^"]*)"$', script.read_text(encoding="utf-8"), re.MULTILINE)
        return set(found.group(1).split()) if found else set()

    @cached_property
    def pins(self) -> dict[str, str]:
        """Each package setup.cfg pins (``name==version``, name normalised) and its version."""
        text = (self.root / "setup.cfg").read_text(encoding="utf-8")
        found = re.findall(r"^\s+([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==(\S+)\s*$", text, re.MULTILINE)
        return {_normalise(name): version for name, version in found}

    @cached_property
    def top_level(self) -> set[str]:
        ignored = {"results", "build", "dist", "cache"}
        return {p.name for p in self.root.iterdir() if not p.name.startswith(".") and p.name not in ignored}

    def report(self, where: str, message: str) -> None:
        self.problems.append(f"{where}: {message}")

    # -- files -----------------------------------------------------------------------------------

    def check_file(self, path: Path) -> list[str]:
        """Check one Markdown file; returns (and keeps) the problems found, each naming file:line."""
        before = len(self.problems)
        text = path.read_text(encoding="utf-8")
        shown = path.relative_to(self.root) if path.is_relative_to(self.root) else path
        for command in commands(shown, text):
            self.check_command(command)
        self.check_links(path, shown, text)
        return self.problems[before:]

    def check_links(self, path: Path, shown: Path, text: str) -> None:
        """Relative links (anchors included) and repository paths in inline code outside code blocks."""
        in_block = {n for start, _, lines in shell_blocks(text) for n in range(start - 1, start + len(lines) + 1)}
        for number, line in enumerate(text.split("\n"), 1):
            if number in in_block:
                continue
            for match in _LINK.finditer(line):
                self.check_link(f"{shown}:{number}", path, match.group(1) or match.group(2))
            for match in _CODE_SPAN.finditer(line):
                self.check_path(f"{shown}:{number}", match.group(1), path.parent, strict=False)
                self.check_task_name(f"{shown}:{number}", match.group(1))
            for match in _SECTION_REFERENCE.finditer(line):
                self.check_section(f"{shown}:{number}", path, match.group(1), match.group(2))
            for match in _INSTALL_SPAN.finditer(line):
                if match.group(1) not in self.symptoms:
                    self.check_command(Command(shown, number, _words(match.group(1))))

    def check_task_name(self, where: str, word: str) -> None:
        """A suite task, group or tag named in prose (``logic_consistency_x``, ``_{a,b}`` expanded) must exist."""
        if not _TASK_NAME.match(word):
            return
        unknown = [name for name in _expand_braces(word) if not self.task_known(name)]
        if unknown:
            self.report(where, f"{', '.join(unknown)}: not in lm-eval's task index")

    def check_link(self, where: str, path: Path, target: str) -> None:
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or _placeholder(target):
            return
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            self.report(where, f"link target {target!r} does not exist")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text(encoding="utf-8")):
            self.report(where, f"link {target!r}: no heading with anchor #{anchor} in {linked.name}")

    def check_section(self, where: str, path: Path, page: str, section: str) -> None:
        """A section named in prose (``README, "Install"``) must be a heading of that page.

        ``README`` is the repository's front page; another ``.md`` is found beside the doc, then at the root.
        """
        candidates = [self.root / "README.md"] if page == "README" else [path.parent / page, self.root / page]
        target = next((candidate for candidate in candidates if candidate.is_file()), None)
        if target is None:
            return  # another project's page (lm-eval's task_guide.md): not ours to check
        if slug(section) not in anchors(target.read_text(encoding="utf-8")):
            self.report(where, f'{page}, "{section}": no such section in {target.name}')

    def check_path(self, where: str, word: str, here: Path, *, strict: bool = True) -> None:
        """A word naming a file of the repository (first part a top-level entry) must exist.

        ``strict=False`` (inline code in prose) checks only words that look like a file or folder path.
        """
        word = word.split("=", 1)[-1].rstrip(".,:;)")
        first = word.split("/", 1)[0]
        if "/" not in word or _placeholder(word) or "$" in word or first not in self.top_level or word in self.not_ours:
            return
        if not strict and not (Path(word).suffix in _PATH_SUFFIXES or word.endswith("/")):
            return
        if not any(next(base.glob(word.rstrip("/")), None) for base in (self.root, here)):
            self.report(where, f"path {word!r} does not exist")

    # -- commands --------------------------------------------------------------------------------

    def check_command(self, command: Command) -> None:
        program, args = _program(command.words)
        if program == "bash" and args[:1] == ["scripts/setup.sh"]:
            self.check_setup(command.where(), args[1:])
        installing = _pip_install(program, args)
        if installing is not None:
            self.check_install(command, installing)
            return
        if program == "bash" and args:
            self.check_path(command.where(), args[0], self.root)
            forward = SCRIPT_FORWARDS.get(args[0])
            if forward and args[1:]:
                self.check_program(command, forward[0], [*forward[1:], *args[1:]])
            return
        for word in args:
            self.check_path(command.where(), word, self.root)
        if program in ("lm_eval", "logic-consistency"):
            self.check_program(command, program, args)

    def check_program(self, command: Command, program: str, args: list[str]) -> None:
        parser = self.suite_parser if program == "logic-consistency" else self.lm_eval_parser
        if program == "lm_eval" and args and args[0] not in _subcommands(parser):
            args = ["run", *args]  # lm-eval's legacy form: no subcommand means `run`
        # a placeholder stands for some value: parse a stand-in (a lone `...` stands for more arguments)
        concrete = [PLACEHOLDER_VALUE if _placeholder(word) else word for word in args if word != "..."]
        error = _parse_error(parser, concrete)
        if error:
            self.report(command.where(), f"{program} {' '.join(args)}: {error}")
            return
        sub = _deepest_parser(parser, concrete)
        for flag in (word.split("=", 1)[0] for word in concrete if word.startswith("--")):
            if flag not in sub._option_string_actions:
                self.report(command.where(), f"{program}: {flag} is an abbreviation, not a flag of `{sub.prog}`")
        self.check_names(command, concrete)

    def check_names(self, command: Command, args: list[str]) -> None:
        for flag, value in zip(args, args[1:]):
            if flag == "--tasks":
                names = [n for n in value.split(",") if n and n != PLACEHOLDER_VALUE and not n.endswith(".yaml")]
                unknown = [name for name in names if not self.task_known(name)]
                if unknown:
                    self.report(command.where(), f"--tasks: {', '.join(unknown)} not in lm-eval's task index")
            elif flag == "--model" and value != PLACEHOLDER_VALUE and value not in self.models:
                self.report(command.where(), f"--model {value}: not in lm-eval's model registry")

    def check_setup(self, where: str, args: list[str]) -> None:
        """``bash scripts/setup.sh EXTRA[,EXTRA]``: each extra one that setup.sh takes."""
        wanted = [extra for arg in args[:1] if not _placeholder(arg) for extra in arg.split(",")]
        unknown = [extra for extra in wanted if extra not in self.setup_sh_extras]
        if unknown:
            self.report(where, f"scripts/setup.sh {','.join(unknown)}: not an extra setup.sh takes "
                        f"({', '.join(sorted(self.setup_sh_extras))})")  # fmt: skip

    def check_install(self, command: Command, args: list[str]) -> None:
        """A ``pip install`` line: runnable from a clone, in setup.sh's ``.venv`` or the reader's environment."""
        where, first = command.where(), command.words[0]
        if first.startswith(".venv/bin/") and Path(first).name != "uv":
            self.report(where, f"{first} ... install: the .venv that scripts/setup.sh makes has no pip; use "
                        "bash scripts/setup.sh EXTRA or .venv/uv/bin/uv pip install --python .venv/bin/python ...")  # fmt: skip
        skip = False
        for word in args:
            if skip or _placeholder(word):
                skip = False
                continue
            if word.split("=", 1)[0] in _PIP_VALUED:
                skip = "=" not in word
                continue
            if word.startswith("-"):
                continue
            name, extras, spec = _REQUIREMENT.match(word).groups()  # type: ignore[union-attr]
            if word.startswith("."):  # the clone itself: its extras must be setup.cfg's
                found = re.match(r"^\.\[([^\]]*)\]$", word)
                unknown = [e for e in (found.group(1).split(",") if found else []) if e not in self.extras]
                if unknown:
                    self.report(where, f"{word}: {', '.join(unknown)} is not an extra of setup.cfg")
            elif _normalise(name) == "logic-consistency":
                self.report(where, f"{word}: no package index has logic-consistency yet; install from a clone (-e .)")
            elif spec.startswith("==") and self.pins.get(_normalise(name), spec[2:]) != spec[2:]:
                self.report(where, f"{word}: setup.cfg pins {name}=={self.pins[_normalise(name)]}")


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pip_install(program: str, args: list[str]) -> list[str] | None:
    """The arguments after ``install`` of a pip or uv pip install line, else ``None``."""
    if program in {"pip", "pip3", "python -m pip"} and args[:1] == ["install"]:
        return args[1:]
    if program == "uv" and args[:2] == ["pip", "install"]:
        return args[2:]
    return None


def _program(words: list[str]) -> tuple[str, list[str]]:
    """The program a command runs (``lm_eval`` or ``logic-consistency`` under any spelling) and its arguments."""
    name, args = Path(words[0]).name, words[1:]
    if name in {"python", "python3"} and args[:1] == ["-m"] and len(args) > 1:
        name, args = args[1], args[2:]
        name = {"lm_eval": "lm_eval", "logic_consistency.cli": "logic-consistency"}.get(name, f"python -m {name}")
    if name in {"sh", "bash"}:
        return "bash", args
    return ("lm_eval" if name == "lm-eval" else name), args


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _deepest_parser(parser: argparse.ArgumentParser, args: list[str]) -> argparse.ArgumentParser:
    for word in args:
        sub = _subcommands(parser).get(word)
        if sub is not None:
            parser = sub
    return parser


def _parse_error(parser: argparse.ArgumentParser, args: list[str]) -> str:
    """argparse's error message for ``args`` (empty when they parse); nothing is run."""
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(args)
    except SystemExit as exit_:
        if exit_.code:
            return stderr.getvalue().strip().splitlines()[-1] if stderr.getvalue().strip() else "does not parse"
    return ""


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors of a Markdown text (lower case, punctuation dropped, spaces to ``-``)."""
    out: set[str] = set()
    fenced = {n for start, _, lines in shell_blocks(text) for n in range(start, start + len(lines))}
    for number, line in enumerate(text.split("\n"), 1):
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match or number in fenced:
            continue
        base = slug(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", match.group(1)))
        candidate, n = base, 0
        while candidate in out:
            n += 1
            candidate = f"{base}-{n}"
        out.add(candidate)
    return out


def slug(heading: str) -> str:
    """GitHub's anchor of one heading text (lower case, punctuation dropped, spaces to ``-``)."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
