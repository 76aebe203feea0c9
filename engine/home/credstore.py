"""The credential store: ``dircrd/credentials.json``, mode 0600, alias → user and password.

Domains group aliases (default ``OracleGoldenGate``, as in GoldenGate). The file is protected by
its mode only (it is not encrypted; there is no wallet). Nothing here ever returns a password
for display: :meth:`CredentialStore.entries` yields aliases and users only, and
:meth:`CredentialStore.lookup` is for DBLOGIN.

The store is used only if the home's owner wrote it and nobody else can read or write it, and
only if every entry has the shape ``{domain: {alias: {"user": str, "password": str}}}``;
otherwise every command that needs it (ALTER ... ADD too: nothing is written over a store that
cannot be read) fails with one line naming the file. DELETE CREDENTIALSTORE still removes it.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.home.jsonfile import JsonRefused, loads_bounded, write_json
from engine.home.layout import Home
from engine.home.trust import BadFile, display, read_trusted

DEFAULT_DOMAIN = "OracleGoldenGate"
STORE_DIR = "dircrd"
STORE_FILE = "credentials.json"
MAX_STORE_BYTES = 1 << 20  # a store larger than this is refused unread


class CredentialStoreError(ValueError):
    """Missing store, unknown alias, duplicate alias; the message is one line."""


@dataclass(frozen=True)
class Credential:
    alias: str
    user: str
    password: str
    domain: str


class CredentialStore:
    def __init__(self, home: Home) -> None:
        self.home = home
        self.path = home.sub(STORE_DIR) / STORE_FILE

    @property
    def display_dir(self) -> str:
        return f"./{STORE_DIR}/"

    def exists(self) -> bool:
        return self.path.exists()

    def create(self) -> bool:
        """Create an empty store; False when one exists already."""
        if self.exists():
            return False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._save({})
        return True

    def _load(self) -> dict[str, dict[str, dict[str, str]]]:
        if not self.exists():
            raise CredentialStoreError(
                f"Credential store not found in {self.display_dir}; use ADD CREDENTIALSTORE."
            )
        try:
            raw = read_trusted(self.path, self.home, "Credential store", MAX_STORE_BYTES)
        except FileNotFoundError:
            raise CredentialStoreError(
                f"Credential store not found in {self.display_dir}; use ADD CREDENTIALSTORE."
            ) from None
        except BadFile as exc:
            raise CredentialStoreError(str(exc)) from None
        if self.path.stat().st_mode & (stat.S_IRGRP | stat.S_IROTH):
            raise self._bad(
                f"is readable by others (mode {stat.S_IMODE(self.path.stat().st_mode):04o}); "
                "chmod 600 it"
            )
        try:
            data = loads_bounded(raw, max_bytes=MAX_STORE_BYTES)
        except JsonRefused as exc:
            raise self._bad(f"is corrupt ({exc})") from None
        problem = _shape_problem(data)
        if problem is not None:
            raise self._bad(f"is corrupt ({problem})")
        return data  # type: ignore[no-any-return]

    def _bad(self, reason: str) -> CredentialStoreError:
        return CredentialStoreError(
            f"Credential store {display(self.path, self.home)} {reason}; repair it, or DELETE "
            "CREDENTIALSTORE and add the aliases again."
        )

    def _save(self, data: dict[str, dict[str, dict[str, str]]]) -> None:
        write_json(self.path, data, mode=0o600, sealed=False)
        os.chmod(self.path, 0o600)

    def add(
        self, user: str, password: str, alias: str | None, domain: str | None, replace: bool
    ) -> None:
        data = self._load()
        dom = domain or DEFAULT_DOMAIN
        key = alias or user
        entries = data.setdefault(dom, {})
        if key in entries and not replace:
            raise CredentialStoreError(
                f"Alias {key} already exists in domain {dom}; use ALTER CREDENTIALSTORE REPLACE."
            )
        if key not in entries and replace:
            raise CredentialStoreError(f"Alias {key} does not exist in domain {dom}.")
        entries[key] = {"user": user, "password": password}
        self._save(data)

    def delete(self, user: str, alias: str | None, domain: str | None) -> None:
        data = self._load()
        dom = domain or DEFAULT_DOMAIN
        key = alias or user
        entry = data.get(dom, {}).get(key)
        if entry is None or entry["user"] != user:
            raise CredentialStoreError(f"No alias {key} for user {user} in domain {dom}.")
        del data[dom][key]
        if not data[dom]:
            del data[dom]
        self._save(data)

    def remove(self) -> None:
        if not self.exists():
            raise CredentialStoreError(f"Credential store not found in {self.display_dir}.")
        self.path.unlink()

    def entries(self, domain: str | None = None) -> list[tuple[str, str, str]]:
        """``(domain, alias, user)`` for every entry (of ``domain``), sorted; no passwords."""
        data = self._load()
        rows = [
            (dom, alias, entry["user"])
            for dom, aliases in data.items()
            for alias, entry in aliases.items()
            if domain is None or dom == domain
        ]
        return sorted(rows)

    def lookup(self, alias: str, domain: str | None = None) -> Credential:
        data = self._load()
        dom = domain or DEFAULT_DOMAIN
        entry = data.get(dom, {}).get(alias)
        if entry is None:
            raise CredentialStoreError(f"Alias {alias} not found in domain {dom}.")
        return Credential(alias, entry["user"], entry["password"], dom)


def _shape_problem(data: Any) -> str | None:
    """What is wrong with the parsed store, or ``None`` when every entry has its shape."""
    if not isinstance(data, dict):
        return f"the top level is a {type(data).__name__}, not domains"
    for domain, aliases in data.items():
        if not isinstance(aliases, dict):
            return f"domain {domain} holds a {type(aliases).__name__}, not aliases"
        for alias, entry in aliases.items():
            if not isinstance(entry, dict):
                return f"alias {alias} in domain {domain} is not an entry"
            for key in ("user", "password"):
                if not isinstance(entry.get(key), str):
                    return f"alias {alias} in domain {domain} has no {key} string"
    return None


def store_path(home: Home) -> Path:
    return CredentialStore(home).path
