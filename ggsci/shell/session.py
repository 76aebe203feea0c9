"""The interactive shell: small factories for history, key bindings and the prompt session,
and the read-eval loop. Ctrl-C cancels the line being typed, Ctrl-D on an empty line exits."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TextIO

import platformdirs
from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory, History
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.key_binding.key_processor import KeyPressEvent
from prompt_toolkit.output import Output

from engine.home import Home
from ggsci.session import Session
from ggsci.shell.completion import GGSCICompleter
from ggsci.shell.lexer import STYLE, GGSCILexer


def history_path() -> Path:
    """Where typed lines are kept across sessions (HISTORY itself lists this session only)."""
    return Path(platformdirs.user_data_dir("ggsci", appauthor=False)) / "history"


def make_history(path: Path | None = None) -> History:
    target = path or history_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    return FileHistory(str(target))


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
    """Read and run commands until EXIT or Ctrl-D; 0 if all succeeded, 1 otherwise."""

    def ask(text: str) -> str | None:
        try:
            return prompt.prompt(text)
        except (EOFError, KeyboardInterrupt):
            return None

    def ask_secret(text: str) -> str | None:
        try:
            return prompt.prompt(text, is_password=True)
        except (EOFError, KeyboardInterrupt):
            return None

    session.read_line = ask
    session.read_secret = ask_secret
    failed = False
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
        failed |= not outcome.ok
        if outcome.exit:
            break
    return 1 if failed else 0


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
