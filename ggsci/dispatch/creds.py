"""The credential store commands and DBLOGIN."""

from __future__ import annotations

from typing import Any

from engine.home.credstore import DEFAULT_DOMAIN, CredentialStore, CredentialStoreError
from ggsci.commands import models as M
from ggsci.dblogin import LoginError, check_login, resolve_database, split_user
from ggsci.session import CommandFailed, Login, Session


def _store(session: Session) -> CredentialStore:
    return CredentialStore(session.home)


def add_store(session: Session, _: M.AddCredentialStore) -> None:
    store = _store(session)
    if not store.create():
        raise CommandFailed(f"ERROR: Credential store already exists in {store.display_dir}.")
    session.say("Credential store created.")


def delete_store(session: Session, _: M.DeleteCredentialStore) -> None:
    try:
        _store(session).remove()
    except CredentialStoreError as exc:
        raise CommandFailed(f"ERROR: {exc}") from exc
    session.say("Credential store deleted.")


def alter_store(session: Session, cmd: M.AlterCredentialStore) -> None:
    store = _store(session)
    try:
        if cmd.action == "DELETE":
            store.delete(cmd.user, cmd.alias, cmd.domain)
        else:
            password = cmd.password
            if password is None:
                password = session.read_secret("Password: ")
                if not password:
                    raise CommandFailed("ERROR: No password given.")
            store.add(cmd.user, password, cmd.alias, cmd.domain, replace=cmd.action == "REPLACE")
    except CredentialStoreError as exc:
        raise CommandFailed(f"ERROR: {exc}") from exc
    session.say(f"Credential store in {store.display_dir} altered.")


def info_store(session: Session, cmd: M.InfoCredentialStore) -> None:
    store = _store(session)
    try:
        rows = store.entries(cmd.domain or DEFAULT_DOMAIN)
    except CredentialStoreError as exc:
        raise CommandFailed(f"ERROR: {exc}") from exc
    session.say(f"Reading from credential store {store.display_dir}:", "")
    for domain in [cmd.domain or DEFAULT_DOMAIN]:
        label = "Default domain" if domain == DEFAULT_DOMAIN else "Domain"
        session.say(f"{label}: {domain}", "")
        for _, alias, user in (r for r in rows if r[0] == domain):
            session.say(f"  Alias: {alias}", f"  Userid: {user}", "")


def url_user(target: str) -> str | None:
    """The user a PostgreSQL URL names (``postgresql://u@h/db`` or ``?user=u``), if any."""
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(target)
    named = parse_qs(parts.query).get("user", [])
    return parts.username or (named[0] if named else None)


def _decrypted(session: Session, text: str, key: str) -> str:
    """PASSWORD x, ENCRYPTKEY k: the password ENCRYPT PASSWORD turned into ``x``."""
    from ggsci.encrypt import EncryptError, decrypt_password, key_material

    try:
        return decrypt_password(text, key_material(session.home, key), key)
    except EncryptError as exc:
        raise LoginError(str(exc)) from exc


def dblogin(session: Session, cmd: M.DbLogin) -> None:
    os_auth = cmd.alias is None and (cmd.userid is None or split_user(cmd.userid)[0] == "/")
    try:
        if cmd.alias is not None:
            cred = _store(session).lookup(cmd.alias, cmd.domain)
            user, db_spec = split_user(cred.user)
            password: str | None = cred.password
        elif cmd.userid is not None:
            user, db_spec = split_user(cmd.userid)
            if user == "/":
                user = session.user
            password = cmd.password
            if password is not None and cmd.encryptkey is not None:
                password = _decrypted(session, password, cmd.encryptkey)
            if password is None and user != session.user:
                password = session.read_secret("Password: ")
        else:
            user, db_spec, password = session.user, None, None
        db = resolve_database(session.home, cmd.sourcedb or db_spec)
        if cmd.alias is None and cmd.userid is None and db.kind == "postgresql":
            user = url_user(db.target) or user  # SOURCEDB alone: the URL's own user, if any
        try:
            check_login(db, user, password, os_auth)
        except LoginError as exc:  # a server that wants a password none was given for:
            if not exc.wants_password:  # asked for, as psql asks (.pgpass and trust still
                raise  # log in without a question)
            password = session.read_secret("Password: ")
            if not password:
                raise
            check_login(db, user, password, os_auth)
    except (CredentialStoreError, LoginError) as exc:
        raise CommandFailed(f"ERROR: Unable to log in: {exc}") from exc
    session.login = Login(user, db.name, db.kind, db.target, password)
    session.say("Successfully logged into database.")


HANDLERS: dict[type[M.Command], Any] = {
    M.AddCredentialStore: add_store,
    M.DeleteCredentialStore: delete_store,
    M.AlterCredentialStore: alter_store,
    M.InfoCredentialStore: info_store,
    M.DbLogin: dblogin,
}
