"""The interactive shell: small factories for history, key bindings and the prompt session,
and the read-eval loop. Ctrl-C cancels the line being typed, Ctrl-D on an empty line exits.

History across sessions is off by default, as in GoldenGate (HISTORY, FC and ! work on the
current session's commands either way): ``GGSCI_HISTORY=on`` keeps it in the platform's data
directory, ``GGSCI_HISTORY=/some/file`` in that file. The file is mode 0600 and never holds a
secret: a line with a password (:func:`params.masking.has_secret`) is recalled within the
session but not written, and answers to password prompts are not kept at all.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TextIO

import platformdirs
from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.key_binding.key_processor import KeyPressEvent
from prompt_toolkit.output import Output

from engine.home.layout import Home
from ggsci.session import Session
from ggsci.shell.completion import GGSCICompleter
from ggsci.shell.lexer import STYLE, GGSCILexer
from params.masking import has_secret

HISTORY_ENV = "GGSCI_HISTORY"


def history_path() -> Path:
    """Where typed lines are kept across sessions (HISTORY itself lists this session only)."""
    return Path(platformdirs.user_data_dir("ggsci", appauthor=False)) / "history"


class PrivateFileHistory(FileHistory):
    """A history file of mode 0600 that never holds a line with a secret; one left by an
    older version is cleaned of them when it is opened."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.close(fd)
        os.chmod(path, 0o600)
        kept = list(super().load_history_strings())  # newest first
        if any(has_secret(line) for line in kept):
            clean = [line for line in reversed(kept) if not has_secret(line)]
            path.write_text("".join(_entry(line) for line in clean))

    def load_history_strings(self) -> Iterable[str]:
        return (line for line in super().load_history_strings() if not has_secret(line))

    def store_string(self, string: str) -> None:
        if not has_secret(string):
            super().store_string(string)


def _entry(line: str) -> str:
    """One entry in FileHistory's format."""
    return "\n# (kept)\n" + "".join(f"+{part}\n" for part in line.split("\n"))


def make_history(path: Path | None = None, env: Mapping[str, str] = os.environ) -> History:
    """The prompt's history: in memory only unless ``path`` is given or ``GGSCI_HISTORY`` is
    ``on`` (the platform's data directory) or a file name."""
    setting = env.get(HISTORY_ENV, "off").strip()
    if path is None:
        if setting.lower() in ("", "off", "no", "0", "false"):
            old = history_path()
            if old.is_file():  # kept by an older version: cleaned of secrets, made 0600
                PrivateFileHistory(old)
            return InMemoryHistory()
        on = setting.lower() in ("on", "yes", "1", "true")
        path = history_path() if on else Path(setting).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    return PrivateFileHistory(path)


def make_key_bindings() -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("c-space")
    def _(event: KeyPressEvent) -> None:
        """Open the completion menu without typing."""
        event.current_buffer.start_completion(select_first=False)

    return bindings


def make_prompt_session(
    home: Home, history: History, input: Input | None = None, output: Output | None = None
) -> PromptSession[str]:
    return PromptSession(
        completer=GGSCICompleter(home),
        complete_while_typing=False,
        lexer=GGSCILexer(),
        style=STYLE,
        history=history,
        key_bindings=make_key_bindings(),
        input=input,
        output=output,
        enable_history_search=True,
    )


def banner(home: Home) -> list[str]:
    return [
        "",
        "ggsci: a GoldenGate-style command interpreter",
        f"Home: {home.root}",
        "Type HELP for the commands, EXIT or Ctrl-D to leave.",
        "",
    ]


def _load_interpreter() -> None:
    """Import the grammar and the handlers while the user types the first command.

    The prompt is drawn before they are loaded (start-up budget); by the first Enter they are
    normally in ``sys.modules`` already, else the import finishes then.
    """
    import ggsci.dispatch.table  # noqa: F401


def repl(session: Session, prompt: PromptSession[str]) -> int:
    """Read and run commands until EXIT or Ctrl-D; how many failed (at most 255)."""

    def ask(text: str) -> str | None:
        try:
            return prompt.prompt(text)
        except (EOFError, KeyboardInterrupt):
            return None

    secret_prompt: PromptSession[str] = PromptSession(
        input=prompt.input, output=prompt.output, history=InMemoryHistory()
    )  # an answer to a password prompt goes into no history, not even this session's

    def ask_secret(text: str) -> str | None:
        try:
            return secret_prompt.prompt(text, is_password=True)
        except (EOFError, KeyboardInterrupt):
            return None

    session.read_line = ask
    session.read_secret = ask_secret
    failed = 0
    warm_up = threading.Thread(target=_load_interpreter, daemon=True)
    session.say(*banner(session.home))
    while True:
        try:
            line = prompt.prompt(session.prompt(), pre_run=None if warm_up.ident else warm_up.start)
        except KeyboardInterrupt:
            continue
        except EOFError:
            break
        from ggsci.dispatch.table import bind, execute

        outcome = execute(bind(session), line)
        session.say("")
        failed += not outcome.ok
        if outcome.exit:
            break
    return min(failed, 255)


def interactive(
    home: Home,
    out: TextIO,
    input: Input | None = None,
    output: Output | None = None,
    history: History | None = None,
) -> int:
    session = Session(home, out)
    prompt = make_prompt_session(home, history or make_history(), input, output)
    return repl(session, prompt)
