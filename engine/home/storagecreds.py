"""A storage location's secret kept in the home's credential store, never in another file.

A location may carry S3 credentials in its user part (``s3://KEY:SECRET@bucket/...``,
:mod:`engine.storage`). Where the home records such a location (an attached database's
archive location, an embedded database's archive destination), :func:`keep` moves the
secret into the credential store (``dircrd/credentials.json``, mode 0600: domain
:data:`DOMAIN`, an alias naming what the location is for, the key as its user) and gives the
location to write down without it (``s3://KEY@bucket/...``); :func:`restore` puts it back
when the location is read. A location without a secret is written as given (nothing goes to
the store), and one whose alias is gone from the store is used without it (the storage layer
then fails in one line, the location masked). ``INFO CREDENTIALSTORE DOMAIN GGSTORAGE``
lists the aliases; the secrets are never shown.

A secret given on a command line is in that process's ``/proc/PID/cmdline`` while it runs,
which other local users may read. To keep it off every command line, put it in the store
first (``ALTER CREDENTIALSTORE ADD USER KEY ALIAS ATTACHED_ORA DOMAIN GGSTORAGE`` asks for
it) and give the location with the key alone (``s3://KEY@bucket/...``): a location naming
the key the alias keeps leaves the stored secret where it is.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from engine.home.credstore import CredentialStore, CredentialStoreError
from engine.home.layout import Home

#: The credential store's domain of storage locations' secrets.
DOMAIN = "GGSTORAGE"


class StorageCredentialError(ValueError):
    """The credential store cannot take or give the secret (one line, naming the store)."""


def _split(location: str) -> tuple[str, str, str] | None:
    """(user, secret, location without the secret) of a URL whose user part has both."""
    parts = urlsplit(location)
    if not parts.scheme or "@" not in parts.netloc:
        return None
    userinfo, _, host = parts.netloc.rpartition("@")
    user, sep, secret = userinfo.partition(":")
    if not sep or not secret:
        return None
    return user, secret, urlunsplit(parts._replace(netloc=f"{user}@{host}"))


def keep(home: Home, location: str, alias: str) -> str:
    """``location`` as the home may write it down: its secret moved to the credential store
    under ``alias`` (made with the store when there is none; replacing an earlier one)."""
    split = _split(location)
    store = CredentialStore(home)
    try:
        if split is None:
            if not _stored_for(home, location, alias):
                forget(home, alias)
            return location
        user, secret, bare = split
        store.create()
        replace = any(a == alias for _d, a, _u in store.entries(DOMAIN))
        store.add(user, secret, alias, DOMAIN, replace=replace)
    except (CredentialStoreError, OSError) as exc:
        raise StorageCredentialError(f"the location's secret cannot be kept: {exc}") from None
    return bare


def _stored_for(home: Home, location: str, alias: str) -> bool:
    """Whether ``location`` names a key only (``s3://KEY@bucket/...``) whose secret the
    store keeps under ``alias`` (put there by ``ALTER CREDENTIALSTORE ADD USER KEY ALIAS
    alias DOMAIN GGSTORAGE``, which asks for it: the secret then never appears on a command
    line, where other local users may read it in ``/proc``)."""
    parts = urlsplit(location)
    if not parts.scheme or "@" not in parts.netloc:
        return False
    user = parts.netloc.rpartition("@")[0]
    store = CredentialStore(home)
    if ":" in user or not store.exists():
        return False
    try:
        return any(a == alias and u == user for _d, a, u in store.entries(DOMAIN))
    except (CredentialStoreError, ValueError):
        return False


def restore(home: Home, location: str, alias: str) -> str:
    """The location to use: the secret kept under ``alias`` put back in its user part."""
    parts = urlsplit(location)
    if not parts.scheme or "@" not in parts.netloc:
        return location
    userinfo, _, host = parts.netloc.rpartition("@")
    if ":" in userinfo or not CredentialStore(home).exists():
        return location
    try:
        cred = CredentialStore(home).lookup(alias, DOMAIN)
    except (CredentialStoreError, ValueError):
        return location
    if cred.user != userinfo:
        return location
    return urlunsplit(parts._replace(netloc=f"{userinfo}:{cred.password}@{host}"))


def forget(home: Home, alias: str) -> None:
    """Remove the secret kept under ``alias`` (nothing when there is none)."""
    store = CredentialStore(home)
    if not store.exists():
        return
    try:
        for _d, a, user in store.entries(DOMAIN):
            if a == alias:
                store.delete(user, alias, DOMAIN)
    except (CredentialStoreError, ValueError):
        return


def key_of(location: str) -> str | None:
    """The key a location names without its secret (``s3://KEY@bucket/...``), else None."""
    parts = urlsplit(location)
    if not parts.scheme or "@" not in parts.netloc:
        return None
    user = parts.netloc.rpartition("@")[0]
    return None if ":" in user or not user else user


def with_secret(location: str, secret: str) -> str:
    """``s3://KEY@bucket/...`` with ``secret`` put in its user part (in memory only)."""
    parts = urlsplit(location)
    user, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{user}:{secret}@{host}"))


def secret_for_key(home: Home, key: str) -> str | None:
    """The secret the store keeps for ``key`` under any alias of :data:`DOMAIN` (None: none,
    or several different ones, which a location naming the key alone cannot choose from)."""
    store = CredentialStore(home)
    if not store.exists():
        return None
    try:
        found = {store.lookup(a, DOMAIN).password for _d, a, u in store.entries(DOMAIN) if u == key}
    except (CredentialStoreError, ValueError):
        return None
    return found.pop() if len(found) == 1 else None
