"""ENCRYPT PASSWORD and its inverse for DBLOGIN ``PASSWORD x, ENCRYPTKEY k``.

The cipher is AES in GCM mode (the ``cryptography`` library), so a wrong key or a changed
character is detected, never decrypted to garbage. The key is ``DEFAULT`` (a key built into
ggsci, as GoldenGate's DEFAULT key is: it only keeps the password out of plain sight) or a
name looked up in the home's ``ENCKEYS`` file, GoldenGate's format: one ``name  0xHEX`` a line
(``--`` or ``#`` comments), the file written by the home's owner and not writable by others
(:func:`engine.home.trust.read_trusted`). The AES key is derived from the key's bytes with HKDF
(SHA-256) to the algorithm's size, so any key length in ENCKEYS gives a proper key.

The encrypted form is upper-case text: ``AA`` + a letter for the algorithm (``B`` AES128,
``C`` AES192, ``D`` AES256) + base32 of nonce and ciphertext.
"""

from __future__ import annotations

import base64
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from engine.home.enckeys import DEFAULT_KEY, ENCKEYS, EncryptError, key_material

__all__ = ["DEFAULT_KEY", "ENCKEYS", "EncryptError", "key_material"]

ALGORITHMS = {"AES128": 16, "AES192": 24, "AES256": 32}
DEFAULT_ALGORITHM = "AES128"
CODES = {"AES128": "B", "AES192": "C", "AES256": "D"}
NONCE = 12


def _aes(material: bytes, algorithm: str) -> AESGCM:
    size = ALGORITHMS[algorithm]
    key = HKDF(hashes.SHA256(), size, salt=None, info=b"ggsci password " + algorithm.encode())
    return AESGCM(key.derive(material))


def encrypt_password(password: str, material: bytes, algorithm: str = DEFAULT_ALGORITHM) -> str:
    nonce = os.urandom(NONCE)
    sealed = _aes(material, algorithm).encrypt(nonce, password.encode("utf-8"), None)
    body = base64.b32encode(nonce + sealed).decode("ascii").rstrip("=")
    return f"AA{CODES[algorithm]}{body}"


def decrypt_password(text: str, material: bytes, key_name: str = "DEFAULT") -> str:
    """The password ``text`` encrypts; EncryptError when it was not made with this key."""
    algorithm = next((a for a, c in CODES.items() if text.upper().startswith("AA" + c)), None)
    body = text[3:].upper()
    try:
        if algorithm is None:
            raise ValueError("no algorithm")
        raw = base64.b32decode(body + "=" * (-len(body) % 8))
        plain = _aes(material, algorithm).decrypt(raw[:NONCE], raw[NONCE:], None)
        return plain.decode("utf-8")
    except (ValueError, InvalidTag, UnicodeDecodeError):
        raise EncryptError(
            f"The password is not one ENCRYPT PASSWORD made with key {key_name}."
        ) from None
