"""Every PostgreSQL connection of the engine and of GGSCI opens here, so that no libpq or
psycopg error text carries a password to a screen, a report or ggserr.log.

libpq quotes what it cannot parse: ``missing "=" after "secret" in connection info string``
for ``password=my secret``, ``unexpected spaces found in "my secret"`` for a URL. Such an
error is raised again, of the same psycopg class, with the password masked in whole and in
pieces (:func:`params.masking.mask_conn_error`); the original, which holds it, is not chained.
"""

from __future__ import annotations

from typing import Any

from params.masking import mask_conn_error


def pg_connect(
    target: str, *, user: str | None = None, password: str | None = None, **kwargs: Any
) -> Any:
    """``psycopg.connect(target, user=, password=, **kwargs)``; its errors masked."""
    import psycopg

    try:
        return psycopg.connect(target, user=user or None, password=password or None, **kwargs)
    except psycopg.Error as exc:
        text = str(exc)
        masked = mask_conn_error(text, target, password)
        if masked == text:
            raise
        raise type(exc)(masked) from None
