"""What every parameter and option does here: acts, accepted and not used (a warning), or
refused (an error) - found by asking the checker itself, so the list cannot drift.

For each parameter name the checker knows (``parameters.txt`` and the handler table) and
each option of its form (the grammar's specs, the forms in ``parameters.txt``, MAP and
TABLE options, TRANLOGOPTIONS options), a small file holding one statement is checked:
an error is *refused*, a "not used" warning at the statement or the option is *not used*,
anything else *acts*. ``tests/params/test_acts_or_warns.py`` holds each *acts* to engine
code that reads it; ``docs/params.md`` holds the list (``python -m params.doclist --write``
rewrites its generated section, the test fails when it is stale).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from params.build import HANDLERS, all_parameters
from params.builder import GGSCI_COMMANDS
from params.catalog import (
    MAP_OPTIONS,
    REPERROR_RESPONSES,
    TABLE_OPTIONS,
    data_specs,
    tranlog_options,
)
from params.check import CheckResult, check_text
from params.grammar import SPECS

ACTS = "acts"
NOT_USED = "accepted, not used (warning)"
REFUSED = "refused (error)"

#: Files a statement is tried in, first that accepts the bare statement wins; Replicat
#: parameters are tried in a Replicat first.
EXTRACT_FILE = "EXTRACT e1\nEXTTRAIL ./dirdat/aa\n"
REPLICAT_FILE = "REPLICAT r1\n"
CONTEXTS = (EXTRACT_FILE, REPLICAT_FILE, "", "EXTRACT e1\nRMTHOST h, MGRPORT 7809\n")
REPLICAT_FIRST = frozenset({
    "MAP", "MAPEXCLUDE", "REPERROR", "HANDLECOLLISIONS", "NOHANDLECOLLISIONS",
    "INSERTALLRECORDS", "IGNOREINSERTS", "GETINSERTS", "IGNOREUPDATES", "GETUPDATES",
    "IGNOREDELETES", "GETDELETES", "ASSUMETARGETDEFS", "GROUPTRANSOPS", "MAXTRANSOPS",
    "TARGETDB", "DISCARDFILE", "BATCHSQL",
})  # fmt: skip
#: What the preprocessor reads (OBEY, INCLUDE, macros): they act before any handler.
PREPROCESSOR = frozenset({"OBEY", "INCLUDE", "MACRO", "MACROCHAR", "BEGIN", "END", "COMMENT"})
#: A MAP after the statement, for REPERROR (a root REPERROR applies to the MAPs after it);
#: a TABLE under GETUPDATEBEFORES for UPDATERECORDFORMAT (it formats their before images).
AFTER = {"REPERROR": "\nMAP a.b, TARGET c.d;",
         "UPDATERECORDFORMAT": "\nGETUPDATEBEFORES\nTABLE a.b;"}  # fmt: skip
#: Positional arguments of parameters whose grammar is not a plain spec.
POSITIONAL = {
    "TABLE": "a.b", "TABLEEXCLUDE": "a.b", "SEQUENCE": "a.s", "SEQUENCEEXCLUDE": "a.s",
    "MAP": "a.b, TARGET c.d", "MAPEXCLUDE": "a.b", "REPORTCOUNT": "EVERY 1 RECORDS",
    "DYNAMICPORTLIST": "7840-7850", "DDL": "INCLUDE MAPPED", "REPERROR": "(DEFAULT, ABEND)",
    "SPARKMASTER": "local[2]", "SPARKCONF": "spark.sql.shuffle.partitions=4",
    "SPARKPROPERTIES": "./dirprm/spark.properties", "AUTOSTART": "ER *",
    "AUTORESTART": "ER *", "TRANLOGOPTIONS": "EXCLUDEUSER gg", "RMTTRAIL": "./dirdat/bb",
    "FILE": "a.b;", "MACROCHAR": "$", "ACCESSRULE": "PROG *, ALLOW",
}  # fmt: skip
#: Argument candidates by kind; the first the checker takes is used.
SAMPLES = {
    "flag": [""], "int": ["100", "1", "7809", "1000000", "20000000"],
    "word": ["x", "SUNDAY", "AES128", "ER", "'x'", "*", "127.0.0.1"], "group": ["e1"],
    "path": ["./dirdat/aa", "./dirtmp"], "time": ["01:00"], "size": ["1GB"],
    "duration": ["2H"], "interval": ["2H", "4H"], "name": ["c.d"], "format": ["RELEASE 12.2"],
    "password": ["pw"], "cipher": ["AES128"], "fsoption": ["MS_ASYNC"],
    "path_size": ["./dirtmp"], "choice_format": ["FULL"],
    "choice_recovery": ["OVERWRITEMODE"], "choice_fetch": ["REPORT"],
    "parens": ["(x)", "(x = y)", "(DEFAULT, ABEND)", "(1)", "(x > 1)", "(hr.*)"],
    "tag": ["0A"], "login": ["u"], "alias": ["a"], "altdest": ["/arch"], "fmt": ["%t_%s_%r.dbf"],
    "onoff": ["ON"], "profile": ["HIGH"], "retain": ["ENABLED"], "handledl": [""],
}  # fmt: skip


@dataclass(frozen=True)
class Entry:
    parameter: str
    option: str  # "" for the parameter itself
    status: str
    statement: str  # the statement tried (for the acts test)
    context: str


def _problems(r: CheckResult, line: int) -> tuple[bool, list[int]]:
    """(an error on ``line``, the columns of "not used" warnings on it)."""
    mine = [d for d in r.diagnostics if d.origin.line == line]
    return any(d.is_error for d in mine), [
        d.origin.col for d in mine if d.code == "not-used" and not d.is_error
    ]


@cache
def _try(context: str, statement: str) -> tuple[bool, list[int]]:
    name = statement.split()[0]
    r = check_text(context + statement + AFTER.get(name, "") + "\n", "doclist.prm")
    return _problems(r, context.count("\n") + 1)


def _positional(name: str) -> list[str]:
    if name in POSITIONAL:
        return [POSITIONAL[name]]
    spec = SPECS.get(name)
    data = data_specs().get(name)
    if spec is None and data is None:
        return ["", "x", "(x)"]
    kinds = spec.positional if spec else data.positional if data else ()
    required = [SAMPLES[k][0] for k in kinds if not k.endswith("?")]
    every = [SAMPLES[k.rstrip("?")][0] for k in kinds]
    return [" ".join(required), " ".join(every)]


def _options(name: str) -> dict[str, str]:
    if name in ("MAP", "MAPEXCLUDE"):
        return MAP_OPTIONS
    if name in ("TABLE", "TABLEEXCLUDE", "SEQUENCE", "SEQUENCEEXCLUDE"):
        return TABLE_OPTIONS
    if name == "TRANLOGOPTIONS":
        return tranlog_options()
    if name in SPECS:
        return SPECS[name].options
    if name in data_specs():
        return data_specs()[name].options
    return {}


def _base(name: str) -> tuple[str, str] | None:
    """A statement of ``name`` the checker takes without error, and its file context (a
    parameter that needs an option gets the first one the checker takes)."""
    contexts: tuple[str, ...] = CONTEXTS
    if name in REPLICAT_FIRST:
        contexts = (REPLICAT_FILE, *(c for c in CONTEXTS if c != REPLICAT_FILE))
    for context in contexts:
        statements = []
        for pos in _positional(name):
            statement = f"{name} {pos}".rstrip()
            if name in ("TABLE", "MAP", "SEQUENCE", "TABLEEXCLUDE", "MAPEXCLUDE"):
                statement += ";"
            if not _try(context, statement)[0]:
                return statement, context
            statements.append(statement)
        taken = [
            candidate
            for statement in statements
            for option, kind in sorted(_options(name).items())
            for candidate in _with_option(statement, option, kind)
            if not _try(context, candidate)[0]
        ]
        clean = [c for c in taken if not _try(context, c)[1]]  # no "not used" in it
        if clean or taken:
            return (clean or taken)[0], context
    return None


def _with_option(base: str, option: str, kind: str) -> Iterator[str]:
    stem = base.rstrip(";")
    end = ";" if base.endswith(";") else ""
    if stem.startswith("TRANLOGOPTIONS"):
        stem = "TRANLOGOPTIONS"
    for sample in SAMPLES.get(kind, SAMPLES["word"]):
        yield f"{stem}, {option} {sample}".rstrip() + end


def entries() -> list[Entry]:
    return [e for name in sorted(all_parameters()) for e in entries_of(name)]


def entries_of(name: str) -> list[Entry]:
    """The parameter's own entry, then one per option (INFO PARAM shows them)."""
    if name in PREPROCESSOR:
        return [Entry(name, "", ACTS, name, "")]
    found = _base(name)
    if found is None:
        return [Entry(name, "", REFUSED, name, "")]
    statement, context = found
    base_unused = _try(context, statement)[1]
    whole_unused = 1 in base_unused
    out = [Entry(name, "", NOT_USED if whole_unused else ACTS, statement, context)]
    for option, kind in sorted(_options(name).items()):
        if option in statement.replace(",", " ").split()[1:]:  # the base holds it
            status = NOT_USED if whole_unused else ACTS
            out.append(Entry(name, option, status, statement, context))
            continue
        status, tried = REFUSED, statement
        for candidate in _with_option(statement, option, kind):
            error, unused = _try(context, candidate)
            if error:
                continue
            used = not whole_unused and len(unused) == len(base_unused)
            status, tried = (ACTS if used else NOT_USED), candidate
            break
        out.append(Entry(name, option, status, tried, context))
    return out


#: The kinds of group file INFO PARAM names, with a file of each to try a statement in.
COMPONENTS = (("EXTRACT", EXTRACT_FILE), ("REPLICAT", REPLICAT_FILE))


def components_of(entry: Entry) -> list[str]:
    """The kinds of parameter file that take ``entry``'s parameter: MANAGER for the
    Manager's own (mgr.prm), GLOBALS and EXTRACT for the Spark settings, else EXTRACT and
    REPLICAT where the statement is neither refused nor warned as the other kind's."""
    if entry.status == REFUSED:
        return []
    handler = HANDLERS.get(entry.parameter)
    module = getattr(handler, "__module__", "")
    if module == "params.handlers_manager":
        return ["MANAGER"]
    if module == "params.handlers_globals":
        return ["GLOBALS"]
    found = ["GLOBALS"] if module == "params.handlers_spark" else []
    for label, context in COMPONENTS:
        r = check_text(context + entry.statement + "\n", "doclist.prm")
        mine = [d for d in r.diagnostics if d.origin.line == context.count("\n") + 1]
        if not any(d.is_error or "parameter: not used in a" in d.message for d in mine):
            found.append(label)
    return found


def reperror_entries() -> list[Entry]:
    out = []
    for resp in sorted(REPERROR_RESPONSES):
        statement = f"REPERROR (DEFAULT, {resp})"
        error, unused = _try(REPLICAT_FILE, statement)
        status = REFUSED if error else NOT_USED if unused else ACTS
        out.append(Entry("REPERROR", resp, status, statement, "REPLICAT r1\n"))
    return out


BEGIN = "<!-- BEGIN GENERATED by `python -m params.doclist --write`: do not edit -->"
END = "<!-- END GENERATED -->"


def markdown() -> str:
    """The generated section of docs/params.md."""
    rows = entries()
    lines = [BEGIN, "", "### Parameters", ""]
    lines += ["| parameter | here | options that act | options accepted, not used (warning) "
              "| options refused in this sample |", "|---|---|---|---|---|"]  # fmt: skip
    by_param: dict[str, list[Entry]] = {}
    for e in rows:
        by_param.setdefault(e.parameter, []).append(e)
    for name, es in by_param.items():
        head = es[0]
        status = {ACTS: "acts", NOT_USED: "not used", REFUSED: "refused"}[head.status]
        if name in PREPROCESSOR:
            status = "acts (read by the lexer or preprocessor)"
        acts = ", ".join(e.option for e in es[1:] if e.status == ACTS)
        unused = ", ".join(e.option for e in es[1:] if e.status == NOT_USED)
        if head.status == NOT_USED and name not in data_specs() and not _options(name):
            unused = "(form not checked)"
        refused = ", ".join(e.option for e in es[1:] if e.status == REFUSED)
        lines.append(f"| {name} | {status} | {acts} | {unused} | {refused} |")
    lines += ["", "### REPERROR responses", ""]
    for e in reperror_entries():
        lines.append(f"- {e.option}: {'acts' if e.status == ACTS else e.status}")
    lines += [
        "",
        "### Refused",
        "",
        '- a word that is not a parameter (an error with a "did you mean"), and GGSCI '
        f"commands: {', '.join(sorted(GGSCI_COMMANDS))};",
        "- an option a parameter does not have, where its form is known (every parameter "
        "above with options listed, and those marked `|` in `params/data/parameters.txt`): "
        'an error at the option\'s line and column, with a "did you mean" when one is close;',
        "- a number outside the range of that parameter's own reference page.",
        "",
        END,
    ]
    return "\n".join(lines)


def _section(text: str) -> str | None:
    if BEGIN not in text or END not in text:
        return None
    return text[text.index(BEGIN) : text.index(END) + len(END)]


def main(argv: list[str]) -> int:
    doc = Path(__file__).resolve().parent.parent / "docs" / "params.md"
    text = doc.read_text(encoding="utf-8")
    new = markdown()
    old = _section(text)
    if "--write" in argv:
        text = text.replace(old, new) if old else text.rstrip("\n") + "\n\n" + new + "\n"
        doc.write_text(text, encoding="utf-8")
        return 0
    sys.stdout.write(new + "\n")
    return 0 if old == new else 1


assert set(HANDLERS) <= all_parameters()

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
