"""A home's ``ENCKEYS`` file: named encryption keys, GoldenGate's format.

One ``name  0xHEX`` a line (``--`` or ``#`` comments), at least 128 bits of hex; the file must
be written by the home's owner and not writable by others (:func:`engine.home.trust.read_trusted`).
``DEFAULT`` is a key built into ggsci (as GoldenGate's DEFAULT key is: it only keeps a secret
out of plain sight). Used by ENCRYPT PASSWORD (ggsci) and the pump ==> Collector link
(RMTHOST ENCRYPT ..., KEYNAME name: the same name and bytes in both hosts' ENCKEYS).
"""

from __future__ import annotations

import re

from engine.home.layout import Home
from engine.home.trust import BadFile, read_trusted

DEFAULT_KEY = bytes.fromhex("6767736369204445464155544b455920")  # "ggsci DEFAULTKEY"
ENCKEYS = "ENCKEYS"
_KEY_LINE = re.compile(r"^(\S+)\s+0[xX]([0-9A-Fa-f]+)\s*$")


class EncryptError(ValueError):
    """A key that cannot be found or used, or a password that does not decrypt; one line."""


def key_material(home: Home, name: str) -> bytes:
    """The bytes of key ``name``: DEFAULT, or its line in the home's ENCKEYS file."""
    if name.upper() == "DEFAULT":
        return DEFAULT_KEY
    path = home.root / ENCKEYS
    try:
        text = read_trusted(path, home, "ENCKEYS file").decode("utf-8", "replace")
    except FileNotFoundError:
        raise EncryptError(f"No ENCKEYS file in the home: key {name} cannot be found.") from None
    except BadFile as exc:
        raise EncryptError(str(exc).removeprefix("ERROR: ")) from None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("--", "#")):
            continue
        match = _KEY_LINE.match(line)
        if match is None:
            raise EncryptError(f"ENCKEYS line {number} is not 'name 0xHEX'.")
        if match.group(1).upper() == name.upper():
            hexa = match.group(2)
            if len(hexa) % 2 or len(hexa) < 32:
                raise EncryptError(f"Key {name} in ENCKEYS must be at least 128 bits of hex.")
            return bytes.fromhex(hexa)
    raise EncryptError(f"Key {name} is not in the ENCKEYS file.")
