"""Handlers of the Spark parameters: where an Extract's data plane runs and how.

``SPARKMASTER url``, ``SPARKCONF spark.key=value`` (one setting a line, as
``spark-submit --conf``) and ``SPARKPROPERTIES file`` (a Spark properties file, as
``spark-submit --properties-file``). They belong in GLOBALS (every Extract of the home) or
in an Extract's parameter file (that group; its lines win over GLOBALS). The engine reads
them in :mod:`engine.cluster.spark`; docs/cluster.md says what each setting does.
"""

from __future__ import annotations

import re

from params.builder import Builder, unquote
from params.grammar import Parsed, Tok
from params.sparksettings import setting_error

#: Master URLs Spark 4 accepts (``local``, ``local[N]``, ``local[*]``, ``local[N,F]``,
#: ``local-cluster[N,C,M]``, ``spark://host:port[,host:port...]``, ``yarn``, ``k8s://url``).
_MASTER = re.compile(
    r"local(\[(\*|\d+)(,\d+)?\])?"
    r"|local-cluster\[\d+,\d+,\d+\]"
    r"|spark://[^\s:,/]+:\d+(,[^\s:,/]+:\d+)*"
    r"|yarn"
    r"|k8s://\S+",
    re.IGNORECASE,
)
#: A Spark property name (Spark ignores, with a warning, any key not under ``spark.``).
_KEY = re.compile(r"spark\.[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*")
#: Settings with a parameter of their own, or that ggsci sets itself.
_RESERVED = {
    "spark.master": "SPARKMASTER",
    "spark.submit.deployMode": "nothing: the driver runs where the Extract starts",
}


def _text(p: Parsed) -> Tok | None:
    tok = p.positional[0] if p.positional else None
    return tok if isinstance(tok, Tok) and tok.text else None


def _one_word(b: Builder, p: Parsed, what: str) -> Tok | None:
    tok = _text(p)
    if tok is None:
        b.error("syntax", f"{p.keyword.text.upper()}: {what} expected", len(p.keyword.text))
        return None
    if len(tok.text.split()) != 1 and unquote(tok.text) == tok.text:
        b.error("syntax", f"{p.keyword.text.upper()}: one {what} expected", tok.loc)
        return None
    return tok


def h_sparkmaster(b: Builder, p: Parsed) -> None:
    if not b.once("SPARKMASTER"):
        return
    tok = _one_word(b, p, "master URL")
    if tok is None:
        return
    url = unquote(tok.text)
    if not _MASTER.fullmatch(url):
        b.error(
            "spark-master",
            f"SPARKMASTER: {url!r} is not a Spark master URL (local[*], local[N], "
            "spark://host:port, yarn, k8s://https://host:port)",
            tok.loc,
        )
        return
    b.fields["spark_master"] = url


def h_sparkconf(b: Builder, p: Parsed) -> None:
    tok = _text(p)
    if tok is None or "=" not in tok.text:
        loc = tok.loc if tok is not None else len(p.keyword.text)
        b.error("syntax", "SPARKCONF: expected spark.key=value (one setting a line)", loc)
        return
    key, value = (part.strip() for part in tok.text.split("=", 1))
    if not _KEY.fullmatch(key):
        b.error(
            "spark-conf",
            f"SPARKCONF: {key!r} is not a Spark setting (a name under spark., as spark.cores.max)",
            tok.loc,
        )
        return
    if key in _RESERVED:
        b.error("spark-conf", f"SPARKCONF: {key} is set by {_RESERVED[key]}", tok.loc)
        return
    if not value:
        b.error("spark-conf", f"SPARKCONF: {key} has no value", tok.loc + len(tok.text))
        return
    why = setting_error(key, unquote(value))
    if why is not None:
        b.error("spark-conf", f"SPARKCONF {why}", tok.loc + len(tok.text) - len(value))
        return
    conf: dict[str, str] = b.fields.setdefault("spark_conf", {})
    if key in conf:
        b.warn("duplicate", f"SPARKCONF {key} is set again: the last value ({value}) is used")
    conf[key] = unquote(value)


def h_sparkproperties(b: Builder, p: Parsed) -> None:
    if not b.once("SPARKPROPERTIES"):
        return
    tok = _one_word(b, p, "file name")
    if tok is not None:
        b.fields["spark_properties"] = unquote(tok.text)
