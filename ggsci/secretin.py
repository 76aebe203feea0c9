"""Secrets never on a command line: refused there, taken from a prompt or standard input.

A process's arguments are in ``/proc/PID/cmdline``, which every local user may read while it
runs. So a password or a storage secret in an argument of ``ggsci`` (``ggsci run "DBLOGIN
USERID gg, PASSWORD x"``, ``ggsci db attach --archive s3://KEY:SECRET@...``, ``ggsci db logs
s3://KEY:SECRET@...``) is refused in one line saying what to do instead, before anything
runs. The secret comes instead

- from the credential store: a storage location given with its key alone (``s3://KEY@...``)
  takes the secret the store keeps for it (domain ``GGSTORAGE``: under the alias of what the
  location is for, ``ATTACHED_ORA`` / ``ARCHIVEDEST_SRC``, or any alias whose user is that
  key). ``ALTER CREDENTIALSTORE ADD USER KEY ALIAS ATTACHED_ORA DOMAIN GGSTORAGE`` puts it
  there and asks for it;
- from standard input with ``--password-stdin`` (its first line, as ``docker login
  --password-stdin`` reads it);
- else, on a terminal, from a prompt that does not echo.

Parameter files are the owner's own text (mode 0600): a secret there stays allowed.
"""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import Callable
from typing import TextIO

from engine.home import storagecreds
from engine.home.layout import Home
from params.masking import has_secret, mask_secrets

#: What every refusal tells the user to do instead.
_INSTEAD = (
    "give the key alone (s3://KEY@...) with its secret in the credential store (ALTER "
    "CREDENTIALSTORE ADD USER KEY ALIAS {alias} DOMAIN GGSTORAGE asks for it), or add "
    "--password-stdin and write the secret to standard input"
)


class SecretOnCommandLine(ValueError):
    """A secret in an argument; the message is the one line to show."""


def refuse_location(location: str, option: str, alias: str | None) -> None:
    """One line when ``location`` (given to ``option``) holds a secret."""
    if has_secret(location):
        shown = mask_secrets(location)
        raise SecretOnCommandLine(
            f"ERROR: {option} {shown}: a secret on the command line can be read by every local "
            f"user (/proc/PID/cmdline); "
            + _INSTEAD.format(alias=alias or "<alias>")
            + ". The command did nothing."
        )


def refuse_commands(commands: list[str]) -> None:
    """One line when a GGSCI command given as an argument of ``ggsci run`` holds a secret."""
    for n, command in enumerate(commands, 1):
        if has_secret(command):
            raise SecretOnCommandLine(
                f"ERROR: ggsci run: command {n} ({mask_secrets(command)}) holds a password, and "
                "a command line can be read by every local user (/proc/PID/cmdline); leave the "
                "password out and answer the Password: prompt (from standard input without a "
                "terminal), use USERIDALIAS, or give the commands on standard input (ggsci < "
                "FILE) or in an obey file. Nothing was run."
            )


def read_secret(prompt: str, stdin: TextIO | None = None) -> str | None:
    """A secret from a terminal (not echoed), else the first line of standard input."""
    stream = stdin or sys.stdin
    if stream.isatty():
        try:
            return getpass.getpass(prompt) or None
        except (EOFError, KeyboardInterrupt):
            return None
    line = stream.readline(1 << 16)
    return line.rstrip("\r\n") or None


def location_secret(
    home_of: Callable[[], Home], location: str, option: str, alias: str | None, password_stdin: bool
) -> str:
    """``location`` with the secret it needs put back (in memory only): refused when it
    carries one itself; a key alone (``s3://KEY@...``) takes it from standard input
    (``password_stdin``), the store of the home ``home_of`` gives (under ``alias``, or
    any alias of that key), or a prompt on a
    terminal, else refused in one line; unchanged without a user part (the environment's
    credentials, if any)."""
    refuse_location(location, option, alias)
    key = storagecreds.key_of(location)
    if key is None:
        if password_stdin:
            raise SecretOnCommandLine(
                f"ERROR: --password-stdin: {option} {location} names no key (s3://KEY@...) "
                "for the secret to go with."
            )
        return location
    if password_stdin:
        secret = read_secret(f"Secret of {key}: ")
        if secret is None:
            raise SecretOnCommandLine("ERROR: --password-stdin: standard input holds no secret.")
        return storagecreds.with_secret(location, secret)
    home = home_of()  # resolved only for a key alone (it may refuse in one line)
    if alias is not None:
        restored = storagecreds.restore(home, location, alias)
        if restored != location:
            return restored
    stored = storagecreds.secret_for_key(home, key)
    if stored is not None:
        return storagecreds.with_secret(location, stored)
    if sys.stdin.isatty():
        secret = read_secret(f"Secret of {key}: ")
        if secret is not None:
            return storagecreds.with_secret(location, secret)
    if os.environ.get("AWS_SECRET_ACCESS_KEY"):  # the environment's, as documented
        return location
    # a key with no secret is refused by the server later, as an access denied on some file
    raise SecretOnCommandLine(
        f"ERROR: {option} {location}: no secret for key {key}: give it on standard input "
        "with --password-stdin (the home's credential store keeps none, or several, for it)"
    )
