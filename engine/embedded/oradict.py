"""The embedded database's dictionary as a real Oracle database's would be exported: ggsci's
own dictionary JSON (:mod:`engine.redo.dictionary`, what ``engine/redo/sql/ggsci_dictionary.sql``
writes from a live database), so that ``ggsci db attach X --archive DEST --dictionary FILE``
decodes the embedded database's archived logs as it decodes Oracle's (``ggsci db dictionary
NAME --out FILE``).

What DBA_TAB_COLS would show for each column (the SQL script's source). The embedded SQL
already stores INTEGER/FLOAT/DECIMAL as NUMBER, VARCHAR/NVARCHAR2 as VARCHAR2 and NCHAR as
CHAR (:func:`engine.embedded.sql._column_type`); a dictionary given by ``import-dump`` may
name the others, exported as Oracle names them: INTEGER is NUMBER(*,0), VARCHAR is VARCHAR2,
FLOAT is FLOAT(126), NCHAR/NVARCHAR2 keep their names (character set form 2). Lengths
Oracle reports for the fixed-size types (NUMBER 22, DATE 7, TIMESTAMP 11); columns in
segment order = the table's
column order (the embedded database stores every column, none is virtual); the key is the
primary key (none: an empty list, as the script's). Character sets: the embedded database
stores character data as UTF-8, so its database character set is AL32UTF8 and its national
one UTF8 (one of the two Oracle allows, with AL16UTF16). No containers: con_id 0.
"""

from __future__ import annotations

from engine.embedded.dictionary import ColumnDef, TableDef
from engine.embedded.dictionary import Dictionary as EmbeddedDictionary
from engine.redo.dictionary import Column, Dictionary, Table

DB_CHARSET = "AL32UTF8"
NCHAR_CHARSET = "UTF8"
_TYPE = {"INTEGER": "NUMBER", "VARCHAR": "VARCHAR2"}  # the name DBA_TAB_COLS gives
_FIXED_LENGTH = {"NUMBER": 22, "INTEGER": 22, "FLOAT": 22, "DATE": 7, "TIMESTAMP": 11}
_CHARSET_FORM = {"CHAR": 1, "VARCHAR2": 1, "VARCHAR": 1, "NCHAR": 2, "NVARCHAR2": 2}


def _column(seg_col: int, c: ColumnDef) -> Column:
    precision, scale = c.precision, c.scale
    if c.type == "INTEGER":
        precision, scale = None, 0
    elif c.type == "FLOAT" and precision is None:
        precision = 126
    return Column(
        name=c.name,
        seg_col=seg_col,
        type=_TYPE.get(c.type, c.type),
        length=c.length or _FIXED_LENGTH.get(c.type, 0),
        charset_form=_CHARSET_FORM.get(c.type, 0),
        nullable=c.nullable,
        precision=precision,
        scale=scale,
    )


def _table(t: TableDef) -> Table:
    columns = tuple(_column(i + 1, c) for i, c in enumerate(t.columns))
    return Table(0, t.owner, t.name, t.obj, (t.dataobj,), columns, tuple(t.key))


def oracle_dictionary(dic: EmbeddedDictionary, scn: int) -> Dictionary:
    """``dic`` as of ``scn`` in the redo decoder's terms, tables by owner and name."""
    tables = tuple(_table(dic.tables[k]) for k in sorted(dic.tables))
    return Dictionary(scn, DB_CHARSET, NCHAR_CHARSET, tables)
