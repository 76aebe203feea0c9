-- ggsci_dictionary.sql: write the dictionary ggsci decodes Oracle redo with.
--
-- Run as a user that can read DBA_* / CDB_* views (SYSDBA or SELECT_CATALOG_ROLE), in the
-- root container of a CDB (it reads CDB_ views: every PDB's tables) or in a non-CDB:
--
--   sqlplus -s / as sysdba @ggsci_dictionary.sql OLR_TEST > dict.json
--
-- Argument 1: the schema (owner) whose tables are listed ('%' for all; a LIKE pattern).
-- Output: one JSON document, format "ggsci-oracle-dictionary/1" (engine/redo/dictionary.py):
-- the SCN it was taken at, the database and national character sets, and per table: the
-- container id and name (V$CONTAINERS: what a TABLE statement's catalog part names), owner, name, object id, data object ids (the table's, and each partition's),
-- primary key columns, and the columns in segment order (SEGCOL#) with type, length,
-- precision, scale, character set form and nullability. Requires Oracle 12.2+ (JSON_OBJECT).
-- Take it at or after the SCN the Extract starts from; after DDL on a captured table,
-- take a new one (docs/extract.md, "Capture from archived logs").
-- SQL*Plus prints the JSON in lines of at most LINESIZE characters, broken anywhere: the
-- loader joins them again. TRIMOUT OFF keeps a space a break falls after; LONG is SQL*Plus's
-- most (a CLOB longer than it would be cut short).
set pagesize 0 linesize 32767 long 2000000000 longchunksize 32767 trimspool on feedback off
set heading off verify off termout on trimout off
define owner = '&1'
select json_object(
  'format' value 'ggsci-oracle-dictionary/1',
  'scn' value (select current_scn from v$database),
  'db_charset' value (select value from nls_database_parameters where parameter = 'NLS_CHARACTERSET'),
  'nchar_charset' value (select value from nls_database_parameters where parameter = 'NLS_NCHAR_CHARACTERSET'),
  'tables' value (
    select json_arrayagg(json_object(
      'con_id' value o.con_id,
      'container' value (select v.name from v$containers v where v.con_id = o.con_id),
      'owner' value o.owner,
      'name' value o.object_name,
      'obj' value o.object_id,
      'data_objs' value (
        select json_arrayagg(d.data_object_id order by d.data_object_id returning clob)
          from cdb_objects d
         where d.con_id = o.con_id and d.owner = o.owner and d.object_name = o.object_name
           and d.object_type in ('TABLE', 'TABLE PARTITION', 'TABLE SUBPARTITION')
           and d.data_object_id is not null),
      'key' value (
        select json_arrayagg(cc.column_name order by cc.position)
          from cdb_constraints k join cdb_cons_columns cc
            on cc.con_id = k.con_id and cc.owner = k.owner and cc.constraint_name = k.constraint_name
         where k.con_id = o.con_id and k.owner = o.owner and k.table_name = o.object_name
           and k.constraint_type = 'P'),
      'columns' value (
        select json_arrayagg(json_object(
                 'name' value c.column_name,
                 'seg_col' value c.segment_column_id,
                 'type' value regexp_replace(c.data_type, '\([^)]*\)', ''),
                 'length' value c.data_length,
                 'precision' value c.data_precision,
                 'scale' value c.data_scale,
                 'charset_form' value decode(c.character_set_name, 'CHAR_CS', 1, 'NCHAR_CS', 2, 0),
                 'nullable' value decode(c.nullable, 'Y', 'true', 'false') format json)
               order by c.segment_column_id returning clob)
          from cdb_tab_cols c
         where c.con_id = o.con_id and c.owner = o.owner and c.table_name = o.object_name
           and c.segment_column_id is not null)
      returning clob) returning clob)
    from cdb_objects o
   where o.object_type = 'TABLE' and o.owner like upper('&owner') and o.temporary = 'N')
  returning clob)
from dual;
exit
