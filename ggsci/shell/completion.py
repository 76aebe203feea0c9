"""What to suggest (a pure function of the text before the cursor) and how to show it.

:func:`suggest` reuses the grammar's keyword tables; it knows nothing of prompt-toolkit. The
:class:`GGSCICompleter` asks it, supplies the home's group names and file names, and turns the
answer into prompt-toolkit completions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from engine.home.groups import GroupStore
from engine.home.layout import Home
from ggsci.commands import keywords as K

WORD_RE = re.compile(r"[^\s,]+")
BARE_GROUP_VERBS = ("START", "STOP", "KILL", "STATUS", "INFO", "SEND", "LAG", "ALTER")


class Need:
    """Kinds of non-keyword values a position may take."""

    GROUP = "group"
    PATH = "path"
    GROUP_OR_PATH = "group or path"
    NONE = "none"


@dataclass(frozen=True)
class Suggestion:
    """Keyword candidates plus which kind of value (groups, paths) also fits here."""

    prefix: str
    keywords: tuple[str, ...] = ()
    need: str = Need.NONE
    group_kind: str | None = None


def _canon(word: str) -> str:
    up = word.upper()
    for canonical, aliases in K.ABBREVIATIONS.items():
        if up in aliases:
            return canonical
    return up


def _option_arg(verb: str, obj: str | None, word: str) -> K.Arg | None:
    up = _canon(word)
    if obj in ("EXTTRAIL", "RMTTRAIL") and up in K.TRAIL_OPTIONS:
        return K.TRAIL_OPTIONS[up].arg
    if verb in ("ADD", "ALTER") and up in K.GROUP_OPTIONS:
        return K.GROUP_OPTIONS[up].arg
    if verb == "DBLOGIN" and up in ("USERIDALIAS", "USERID", "PASSWORD", "DOMAIN", "SOURCEDB"):
        return K.Arg.WORD
    if verb == "ALTER" and obj == "CREDENTIALSTORE" and up in ("USER", *K.CREDENTIAL_OPTIONS):
        return K.Arg.WORD
    if up in ("ATCSN", "AFTERCSN", "SHOWCH") or (
        obj == "HEARTBEATTABLE" and up in K.HEARTBEAT_LIMITS
    ):
        return K.Arg.INT
    return None


def _options_for(verb: str, obj: str | None) -> tuple[str, ...]:
    if (verb, obj) in K.ALLOWED_GROUP_OPTIONS:
        return K.ALLOWED_GROUP_OPTIONS[(verb, obj)]
    if verb == "ADD" and obj in ("EXTTRAIL", "RMTTRAIL"):
        return ("EXTRACT", "MEGABYTES", "SEQNO", "FORMAT")
    if verb in ("ALTER", "DELETE") and obj in ("EXTTRAIL", "RMTTRAIL"):
        return ("EXTRACT", "MEGABYTES") if verb == "ALTER" else ("EXTRACT",)
    if obj == "HEARTBEATTABLE" and verb in ("ADD", "ALTER"):
        return K.HEARTBEAT_ADD_OPTIONS if verb == "ADD" else K.HEARTBEAT_ALTER_OPTIONS
    return {
        "INFO": K.INFO_OPTIONS,
        "STATUS": K.STATUS_OPTIONS,
        "START": K.START_OPTIONS,
        "LAG": K.LAG_OPTIONS,
    }.get(verb, ())


def suggest(text: str) -> Suggestion:
    """What may come at the end of ``text`` (the line up to the cursor)."""
    words = WORD_RE.findall(text)
    ends_open = bool(text) and not (text[-1].isspace() or text[-1] == ",")
    prefix = words.pop() if ends_open and words else ""
    if not words:
        return Suggestion(prefix, K.VERBS)
    verb = _canon(words[0])
    if verb not in K.VERB_OBJECTS:
        return Suggestion(prefix)
    if verb == "DBLOGIN":
        if len(words) > 1 and _option_arg(verb, None, words[-1]):
            return Suggestion(prefix)
        return Suggestion(prefix, K.DBLOGIN_OPTIONS)
    if verb in ("OBEY", "SHELL"):
        return Suggestion(prefix, need=Need.PATH if len(words) == 1 else Need.NONE)
    if verb == "HELP":
        return Suggestion(
            prefix, K.VERBS if len(words) == 1 else K.VERB_OBJECTS.get(_canon(words[1]), ())
        )
    if len(words) == 1:
        objects = K.VERB_OBJECTS[verb]
        need = Need.GROUP if verb in BARE_GROUP_VERBS else Need.NONE
        return Suggestion(prefix, objects, need)
    obj = _canon(words[1])
    if obj not in K.VERB_OBJECTS[verb]:
        obj_kind = None  # a bare group name
        rest = words[2:]
        if verb == "SEND":
            return Suggestion(prefix, K.SEND_EXTRACT_REQUESTS if not rest else ())
        return _after_group(verb, None, rest, prefix, obj_kind)
    if verb in ("VIEW", "EDIT"):
        if obj == "GGSEVT" or len(words) > 2:
            return Suggestion(prefix)
        # VIEW / EDIT PARAMS: a group's name or a file's
        return Suggestion(prefix, need=Need.GROUP_OR_PATH if obj == "PARAMS" else Need.GROUP)
    if obj == "MANAGER":
        if verb == "SEND" and len(words) == 2:
            return Suggestion(prefix, K.SEND_MANAGER_REQUESTS)
        return Suggestion(prefix)
    if obj == "CREDENTIALSTORE":
        if verb == "ALTER":
            if len(words) == 2:
                return Suggestion(prefix, K.CREDENTIAL_ACTIONS)
            if len(words) == 3:
                return Suggestion(prefix, ("USER",))
            if _option_arg(verb, obj, words[-1]):
                return Suggestion(prefix)
            return Suggestion(prefix, K.CREDENTIAL_OPTIONS[1:])
        return Suggestion(prefix, ("DOMAIN",) if verb == "INFO" and len(words) == 2 else ())
    if obj in ("EXTTRAIL", "RMTTRAIL"):
        if len(words) == 2:
            return Suggestion(prefix, need=Need.PATH)
        return _after_option_words(verb, obj, words, prefix)
    if obj == "HEARTBEATTABLE":
        return _after_option_words(verb, obj, words, prefix)
    if obj == "HEARTBEATENTRY":
        return Suggestion(prefix, need=Need.GROUP if len(words) == 2 else Need.NONE)
    if obj in ("EXTRACT", "REPLICAT", "ER"):
        kind = None if obj == "ER" else obj
        if len(words) == 2:
            return Suggestion(prefix, need=Need.GROUP, group_kind=kind)
        if verb == "SEND":
            return Suggestion(prefix, K.SEND_EXTRACT_REQUESTS if len(words) == 3 else ())
        return _after_group(verb, obj, words[3:], prefix, kind)
    if obj == "ALL" and verb == "INFO" and len(words) == 2:
        return Suggestion(prefix, K.INFO_ALL_OPTIONS)
    return Suggestion(prefix)


def _after_group(
    verb: str, obj: str | None, rest: list[str], prefix: str, kind: str | None
) -> Suggestion:
    words = [verb, obj or "", "group", *rest]
    return _after_option_words(verb, obj, words, prefix)


def _after_option_words(verb: str, obj: str | None, words: list[str], prefix: str) -> Suggestion:
    last = words[-1]
    arg = _option_arg(verb, obj, last)
    if arg in (K.Arg.PATH, K.Arg.TRAIL):
        return Suggestion(prefix, need=Need.PATH)
    if arg == K.Arg.GROUP:
        return Suggestion(prefix, need=Need.GROUP, group_kind="EXTRACT")
    if arg == K.Arg.BEGIN:
        return Suggestion(prefix, ("NOW",))
    if arg is not None and arg != K.Arg.NONE:
        return Suggestion(prefix)
    used = {_canon(w) for w in words}
    return Suggestion(prefix, tuple(o for o in _options_for(verb, obj) if o not in used))


def match_case(candidate: str, prefix: str) -> str:
    """Suggest in the case the user types in (``add ext`` → ``extract``)."""
    return candidate.lower() if prefix and prefix.islower() else candidate


def candidates(
    s: Suggestion,
    groups: Callable[[str | None], Sequence[str]],
    paths: Callable[[str], Sequence[str]],
) -> list[str]:
    """Every completion of ``s.prefix``: keywords first, then group names or paths."""
    up = s.prefix.upper()
    out = [match_case(k, s.prefix) for k in s.keywords if k.startswith(up)]
    if s.need in (Need.GROUP, Need.GROUP_OR_PATH):
        out += [g for g in groups(s.group_kind) if g.startswith(up)]
    if s.need in (Need.PATH, Need.GROUP_OR_PATH):
        out += list(paths(s.prefix))
    return out


def path_candidates(root: Path, prefix: str) -> list[str]:
    """File names under ``root`` (the home) starting with ``prefix``; directories end in /."""
    base, sep, partial = prefix.rpartition("/")
    if sep:
        directory = Path(base or "/") if prefix.startswith("/") else root / base
        lead = base + "/"
    else:
        directory, lead = root, ""
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return []
    return [
        lead + entry.name + ("/" if entry.is_dir() else "")
        for entry in entries
        if entry.name.startswith(partial) and not entry.name.startswith(".")
    ]


class GGSCICompleter(Completer):
    """prompt-toolkit's side: ask :func:`suggest`, fill in the home's groups and files."""

    def __init__(self, home: Home) -> None:
        self.home = home

    def _groups(self, kind: str | None) -> list[str]:
        try:
            return [g.name for g in GroupStore(self.home).all() if kind in (None, g.kind.value)]
        except (OSError, ValueError):
            return []

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        s = suggest(document.text_before_cursor)
        for text in candidates(s, self._groups, lambda p: path_candidates(self.home.root, p)):
            yield Completion(text, start_position=-len(s.prefix))
