"""The users of an embedded database: who may DBLOGIN with USERID and which password.

Kept in the database's ``data.sqlite`` (``_gg_state`` key ``users``) as a JSON object
``{NAME: {"salt": hex, "hash": hex}}``; the hash is scrypt (hashlib), never the password.
A database is created with one user, :data:`DEFAULT_USER` with :data:`DEFAULT_PASSWORD`, and
SQL changes them: ``CREATE USER u IDENTIFIED BY p``, ``ALTER USER u IDENTIFIED BY p``,
``DROP USER u``. Until the first such statement the database holds no ``users`` value and has
the default user only (as a database made before users existed): the default password is no
secret, and creating a database costs no scrypt hash (130 ms, 60% of ``create_database``).
A wrong user or password is GoldenGate's ORA-01017 line.

User statements are DDL: they are written at once through their own connection (as Oracle
commits DDL), whatever transaction the session has open.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import sqlite3
from pathlib import Path

from engine.embedded.errors import SqlError

DEFAULT_USER = "GGADMIN"
DEFAULT_PASSWORD = "ggadmin"
INVALID_LOGIN = "ORA-01017: invalid username/password; logon denied"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_$#]{0,29}$")


def _hash(password: str, salt: bytes) -> bytes:
    return hashlib.scrypt(password.encode("utf-8"), salt=salt, n=2**14, r=8, p=1, dklen=32)


def _entry(password: str) -> dict[str, str]:
    salt = os.urandom(16)
    return {"salt": salt.hex(), "hash": _hash(password, salt).hex()}


def _load(conn: sqlite3.Connection) -> dict[str, dict[str, str]] | None:
    """The users, or None: no user statement yet (the default user only)."""
    row = conn.execute("SELECT value FROM _gg_state WHERE key = 'users'").fetchone()
    if row is None:
        return None
    data = json.loads(row[0])
    return data if isinstance(data, dict) else {}


def check_login(root: Path, user: str, password: str | None) -> bool:
    """Whether ``user`` / ``password`` may log in to the database at ``root``."""
    try:
        conn = sqlite3.connect(f"file:{root / 'data.sqlite'}?mode=ro", uri=True)
    except sqlite3.Error:
        return False
    try:
        users = _load(conn)
    except (sqlite3.Error, ValueError):
        return False
    finally:
        conn.close()
    if users is None:  # the default user only, whose password is no secret: no hash to check
        return (
            user.upper() == DEFAULT_USER
            and password is not None
            and hmac.compare_digest(password.encode("utf-8"), DEFAULT_PASSWORD.encode("utf-8"))
        )
    entry = users.get(user.upper())
    if entry is None or password is None:
        return False
    try:
        expected = bytes.fromhex(entry["hash"])
        got = _hash(password, bytes.fromhex(entry["salt"]))
    except (KeyError, ValueError, TypeError):
        return False
    return hmac.compare_digest(expected, got)


def change(root: Path, action: str, user: str, password: str | None = None) -> str:
    """CREATE / ALTER / DROP USER; the feedback line; SqlError (ORA code) when refused."""
    name = user.upper()
    if not _NAME.match(user):
        raise SqlError(f"invalid user name {user}", "ORA-00922")
    conn = sqlite3.connect(root / "data.sqlite", timeout=10)
    try:
        users = _load(conn)
        if users is None:
            users = {DEFAULT_USER: _entry(DEFAULT_PASSWORD)}
        if action == "CREATE":
            if name in users:
                raise SqlError(f"user name '{name}' conflicts with another user", "ORA-01920")
            users[name] = _entry(password or "")
        elif action == "ALTER":
            if name not in users:
                raise SqlError(f"user '{name}' does not exist", "ORA-01918")
            users[name] = _entry(password or "")
        else:
            if name not in users:
                raise SqlError(f"user '{name}' does not exist", "ORA-01918")
            del users[name]
        conn.execute(
            "INSERT OR REPLACE INTO _gg_state VALUES ('users', ?)", (json.dumps(users).encode(),)
        )
        conn.commit()
    finally:
        conn.close()
    return {"CREATE": "User created.", "ALTER": "User altered.", "DROP": "User dropped."}[action]
