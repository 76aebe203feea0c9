/*
 * rowscan: engine/extract/tablerules.scan_entries in C, for the Extract's TABLE row
 * options in the miner's task.
 *
 * scan(data, reads, keep) walks a trail data area's column entries (big-endian: index,
 * length = 4 + vlen, null indicator, vlen, then vlen value bytes; indices increasing) and
 * gives (values, kept):
 * - values: {index: text or None} of the entries whose index is flagged in ``reads``
 *   (bytes, one flag byte per column index; an index past its end is not flagged);
 * - kept: None when ``keep`` is None, else the entries flagged in ``keep`` (same form), as
 *   they are, concatenated.
 * None when the area is malformed (an entry cut short or with a wrong length, indices not
 * increasing, a read value that is not UTF-8 or a null indicator other than 0 / 0xFFFF
 * with no value): scan_entries then raises, saying where.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "entries.h"

static unsigned be16(const uint8_t *p) { return ent16(p); }

static PyObject *scan(PyObject *mod, PyObject *args) {
    Py_buffer data, reads, keep;
    PyObject *keep_obj;
    if (!PyArg_ParseTuple(args, "y*y*O", &data, &reads, &keep_obj)) return NULL;
    int keeping = keep_obj != Py_None;
    if (keeping && PyObject_GetBuffer(keep_obj, &keep, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&data);
        PyBuffer_Release(&reads);
        return NULL;
    }
    const uint8_t *b = data.buf;
    Py_ssize_t pos = 0, end = data.len, out_len = 0;
    long last = -1;
    PyObject *values = PyDict_New(), *kept = NULL, *result = NULL;
    uint8_t *out = NULL;
    if (!values) goto done;
    if (keeping) {
        kept = PyBytes_FromStringAndSize(NULL, end);
        if (!kept) goto done;
        out = (uint8_t *)PyBytes_AS_STRING(kept);
    }
    while (pos < end) {
        if (end - pos < ENTRY) goto bad;
        unsigned index = be16(b + pos), length = be16(b + pos + 2);
        unsigned null = be16(b + pos + 4), vlen = be16(b + pos + 6);
        Py_ssize_t stop = pos + ENTRY + vlen;
        if (length != 4 + vlen || (long)index <= last || stop > end) goto bad;
        if (flagged(&reads, index)) {
            PyObject *v;
            if (null == NULL_ABSENT) {
                v = PyUnicode_DecodeUTF8((const char *)b + pos + ENTRY, vlen, NULL);
                if (!v) {
                    PyErr_Clear();
                    goto bad;
                }
            } else if (null == NULL_PRESENT && vlen == 0) {
                v = Py_NewRef(Py_None);
            } else {
                goto bad;
            }
            PyObject *k = PyLong_FromUnsignedLong(index);
            int failed = !k || PyDict_SetItem(values, k, v) < 0;
            Py_XDECREF(k);
            Py_DECREF(v);
            if (failed) goto done;
        }
        if (keeping && flagged(&keep, index)) {
            memcpy(out + out_len, b + pos, (size_t)(stop - pos));
            out_len += stop - pos;
        }
        last = (long)index;
        pos = stop;
    }
    if (keeping && out_len != end && _PyBytes_Resize(&kept, out_len) < 0) goto done;
    result = PyTuple_Pack(2, values, keeping ? kept : Py_None);
    goto done;
bad:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(values);
    Py_XDECREF(kept);
    PyBuffer_Release(&data);
    PyBuffer_Release(&reads);
    if (keeping) PyBuffer_Release(&keep);
    return result;
}

/* The header of the entry at pos: 1 when it is whole, well formed and after index last
 * (its index, null indicator, value length and end set), else 0. */
/* The entries of one data area: the value of each column whose slot (a byte per column
 * index: 0 none, k the slot k - 1) is set goes to vals[slot] (a new reference; slots not
 * met keep what they hold), and the entries flagged in keep (when given) are copied to
 * out (advancing *out_len). 1 when the area is malformed, -1 with an exception set. */
static int walk(const uint8_t *b, Py_ssize_t end, const Py_buffer *slots, PyObject **vals,
                const Py_buffer *keep, uint8_t *out, Py_ssize_t *out_len) {
    Py_ssize_t pos = 0;
    long last = -1;
    while (pos < end) {
        unsigned index, null, vlen;
        Py_ssize_t stop;
        if (!entry(b, pos, end, last, &index, &null, &vlen, &stop)) return 1;
        unsigned slot = (Py_ssize_t)index < slots->len ? ((const uint8_t *)slots->buf)[index] : 0;
        if (slot) {
            PyObject *v;
            if (null == NULL_ABSENT) {
                v = PyUnicode_DecodeUTF8((const char *)b + pos + ENTRY, vlen, NULL);
                if (!v) {
                    if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) return -1;
                    PyErr_Clear();
                    return 1;
                }
            } else if (null == NULL_PRESENT && vlen == 0) {
                v = Py_NewRef(Py_None);
            } else {
                return 1;
            }
            Py_SETREF(vals[slot - 1], v);
        }
        if (keep && flagged(keep, index)) {
            memcpy(out + *out_len, b + pos, (size_t)(stop - pos));
            *out_len += stop - pos;
        }
        last = (long)index;
        pos = stop;
    }
    return 0;
}

#define EVENT_SIZE 18
#define MAX_SLOTS 254

/* rows(rows, table, slots, nslots, keep, missing): the row events of ``table`` among
 * ``rows`` (a transaction's, each with its record parts) scanned at once: (positions,
 * columns, events) with the position of each in ``rows``; ``columns[k]`` the values of
 * slot k (``slots`` as walk's) row after row, ``missing`` where a row has no such entry;
 * ``events`` each row without columns and with its parts' data area cut to the ``keep``
 * entries (when ``keep`` is given), as tablerules.rows_in_task makes it. None when a row
 * has no parts or an area is malformed (the caller's Python path says where), or, with
 * ``keep``, a row has a before-image area (it must be cut too: the row-by-row path). */
static PyObject *rows(PyObject *mod, PyObject *args) {
    PyObject *list, *table, *keep_obj, *missing;
    Py_buffer slots, keep;
    Py_ssize_t nslots;
    if (!PyArg_ParseTuple(args, "O!Uy*nOO", &PyList_Type, &list, &table, &slots, &nslots,
                          &keep_obj, &missing))
        return NULL;
    int keeping = keep_obj != Py_None;
    if (keeping && PyObject_GetBuffer(keep_obj, &keep, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&slots);
        return NULL;
    }
    PyObject *positions = PyList_New(0), *columns = NULL, *events = PyList_New(0);
    PyObject *result = NULL, *empty = PyTuple_New(0);
    PyObject *vals[MAX_SLOTS];
    Py_ssize_t i, k;
    if (nslots < 0 || nslots > MAX_SLOTS) {
        PyErr_SetString(PyExc_ValueError, "rows: 0 to 254 slots");
        goto done;
    }
    if (!positions || !events || !empty || !(columns = PyList_New(nslots))) goto done;
    for (k = 0; k < nslots; k++) {
        PyObject *c = PyList_New(0);
        if (!c) goto done;
        PyList_SET_ITEM(columns, k, c);
    }
    for (i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *e = PyList_GET_ITEM(list, i);
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != EVENT_SIZE) {
            PyErr_SetString(PyExc_TypeError, "a row event is an 18-tuple");
            goto done;
        }
        int same = PyObject_RichCompareBool(PyTuple_GET_ITEM(e, 9), table, Py_EQ);
        if (same < 0) goto done;
        if (!same) continue;
        PyObject *parts = PyTuple_GET_ITEM(e, 17);
        if (!PyTuple_Check(parts) || PyTuple_GET_SIZE(parts) != 4 ||
            !PyBytes_Check(PyTuple_GET_ITEM(parts, 1))) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        PyObject *before = PyTuple_GET_ITEM(parts, 2);
        if (keeping && (!PyBytes_Check(before) || PyBytes_GET_SIZE(before) > 0)) {
            /* a before image to cut to the kept columns as well: row by row */
            result = Py_NewRef(Py_None);
            goto done;
        }
        PyObject *data = PyTuple_GET_ITEM(parts, 1);
        Py_ssize_t len = PyBytes_GET_SIZE(data), out_len = 0;
        PyObject *kept = NULL;
        if (keeping && !(kept = PyBytes_FromStringAndSize(NULL, len))) goto done;
        for (k = 0; k < nslots; k++) vals[k] = Py_NewRef(missing);
        int bad = walk((const uint8_t *)PyBytes_AS_STRING(data), len, &slots, vals,
                       keeping ? &keep : NULL, kept ? (uint8_t *)PyBytes_AS_STRING(kept) : NULL,
                       &out_len);
        int failed = bad != 0;
        for (k = 0; k < nslots; k++) {
            if (!failed && PyList_Append(PyList_GET_ITEM(columns, k), vals[k]) < 0) failed = 1;
            Py_DECREF(vals[k]);
        }
        if (!failed && kept && out_len != len && _PyBytes_Resize(&kept, out_len) < 0) {
            kept = NULL;
            goto done;
        }
        if (failed) {
            Py_XDECREF(kept);
            if (bad > 0 && !PyErr_Occurred()) result = Py_NewRef(Py_None);
            goto done;
        }
        PyObject *event = PyTuple_New(EVENT_SIZE), *pos = PyLong_FromSsize_t(i);
        PyObject *new_parts = kept ? PyTuple_Pack(4, PyTuple_GET_ITEM(parts, 0), kept,
                                                  PyTuple_GET_ITEM(parts, 2),
                                                  PyTuple_GET_ITEM(parts, 3))
                                   : Py_NewRef(parts);
        Py_XDECREF(kept);
        if (!event || !pos || !new_parts) {
            Py_XDECREF(event);
            Py_XDECREF(pos);
            Py_XDECREF(new_parts);
            goto done;
        }
        for (k = 0; k < EVENT_SIZE - 1; k++)
            PyTuple_SET_ITEM(event, k,
                             Py_NewRef(k == 11 || k == 12 ? empty : PyTuple_GET_ITEM(e, k)));
        PyTuple_SET_ITEM(event, EVENT_SIZE - 1, new_parts);
        int err = PyList_Append(positions, pos) < 0 || PyList_Append(events, event) < 0;
        Py_DECREF(pos);
        Py_DECREF(event);
        if (err) goto done;
    }
    result = PyTuple_Pack(3, positions, columns, events);
done:
    Py_XDECREF(positions);
    Py_XDECREF(columns);
    Py_XDECREF(events);
    Py_XDECREF(empty);
    PyBuffer_Release(&slots);
    if (keeping) PyBuffer_Release(&keep);
    return result;
}

/* ``area`` cut to the keep entries: a new bytes (the before image checked as cond_area
 * checks it, its read values UTF-8), or NULL with *bad set (malformed) or an exception. */
static PyObject *cut(PyObject *area, Py_ssize_t nconds, const long *cols, const Py_buffer *keep,
                     int *bad) {
    Py_ssize_t len = PyBytes_GET_SIZE(area), out_len = 0;
    int found[MAX_CONDS];
    long long num[MAX_CONDS];
    PyObject *kept = PyBytes_FromStringAndSize(NULL, len);
    if (!kept) return NULL;
    int r = cond_area((const uint8_t *)PyBytes_AS_STRING(area), len, nconds, cols, found, num,
                      keep, (uint8_t *)PyBytes_AS_STRING(kept), &out_len, 1);
    if (r != 0) {
        Py_DECREF(kept);
        *bad = r > 0;
        return NULL;
    }
    if (out_len != len && _PyBytes_Resize(&kept, out_len) < 0) return NULL;
    return kept;
}

/* select(rows, table, keep, conds, make): a transaction's row events, every one of
 * ``table``, with its TABLE rule applied at once (tablerules.select_rows is its twin):
 * a list of (event, token bytes) of the rows that pass each condition of ``conds``
 * ((column index, op 0..5 for = <> < > <= >=, int literal): WHERE as a conjunction of
 * comparisons with a number); each event without columns, its data area and before image
 * cut to the ``keep`` entries when ``keep`` is given (the before image is left alone
 * without it), and with ``make(io)`` (None: b"") as its tokens, called once per
 * operation. None when it cannot say: a row of another table, without parts, with a
 * malformed area, or a compared value that is not plain decimal digits (at most 18). */
static PyObject *select_rows(PyObject *mod, PyObject *args) {
    PyObject *list, *table, *keep_obj, *conds, *make;
    if (!PyArg_ParseTuple(args, "O!UOO!O", &PyList_Type, &list, &table, &keep_obj,
                          &PyTuple_Type, &conds, &make))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(list), i, c;
    long cols[MAX_CONDS];
    int ops[MAX_CONDS], found[MAX_CONDS];
    long long lits[MAX_CONDS], num[MAX_CONDS];
    Py_ssize_t nconds = parse_conds(conds, cols, ops, lits);
    if (nconds < 0) return NULL;
    int keeping = keep_obj != Py_None;
    Py_buffer keep;
    if (keeping && PyObject_GetBuffer(keep_obj, &keep, PyBUF_SIMPLE) < 0) return NULL;
    long io_keys[MAX_IOS];
    PyObject *io_vals[MAX_IOS];
    uint8_t stack[4096], *heap = NULL;
    int nios = 0;
    PyObject *out = PyList_New(0), *empty = PyTuple_New(0), *none_tokens = NULL;
    PyObject *result = NULL;
    if (!out || !empty || !(none_tokens = PyBytes_FromStringAndSize(NULL, 0))) goto done;
    for (i = 0; i < n; i++) {
        PyObject *e = PyList_GET_ITEM(list, i);
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != EVENT_SIZE) {
            PyErr_SetString(PyExc_TypeError, "a row event is an 18-tuple");
            goto done;
        }
        PyObject *name = PyTuple_GET_ITEM(e, 9);
        int same = name == table ? 1 : PyObject_RichCompareBool(name, table, Py_EQ);
        if (same < 0) goto done;
        PyObject *parts = PyTuple_GET_ITEM(e, 17);
        if (!same || !PyTuple_Check(parts) || PyTuple_GET_SIZE(parts) != 4 ||
            !PyBytes_Check(PyTuple_GET_ITEM(parts, 1)) ||
            !PyBytes_Check(PyTuple_GET_ITEM(parts, 2)))
            goto decline;
        PyObject *data = PyTuple_GET_ITEM(parts, 1), *before = PyTuple_GET_ITEM(parts, 2);
        Py_ssize_t len = PyBytes_GET_SIZE(data), out_len = 0;
        PyObject *kept = NULL, *kept_before = NULL;
        uint8_t *cut_to = NULL; /* the kept entries: on the stack when they fit */
        if (keeping) {
            if (len > (Py_ssize_t)sizeof(stack)) {
                PyMem_Free(heap);
                if (!(heap = PyMem_Malloc((size_t)len))) {
                    PyErr_NoMemory();
                    goto done;
                }
                cut_to = heap;
            } else {
                cut_to = stack;
            }
        }
        int bad = cond_area((const uint8_t *)PyBytes_AS_STRING(data), len, nconds, cols, found,
                            num, keeping ? &keep : NULL, cut_to, &out_len, 0);
        int pass = 1;
        for (c = 0; !bad && c < nconds; c++) {
            if (found[c] == 3) bad = 1; /* text that is no plain number: the Python path */
            else if (found[c] != 2 || !holds(ops[c], num[c], lits[c])) pass = 0;
        }
        if (!bad && keeping && PyBytes_GET_SIZE(before) > 0) {
            /* the before image loses the columns too (checked whether the row passes) */
            int cut_bad = 0;
            kept_before = cut(before, nconds, cols, &keep, &cut_bad);
            if (!kept_before) bad = cut_bad ? 1 : -1;
        }
        if (bad) {
            Py_XDECREF(kept_before);
            if (bad > 0 && !PyErr_Occurred()) goto decline;
            goto done;
        }
        if (!pass) {
            Py_XDECREF(kept_before);
            continue;
        }
        if (keeping && !(kept = PyBytes_FromStringAndSize((const char *)cut_to, out_len))) {
            Py_XDECREF(kept_before);
            goto done;
        }
        PyObject *event;
        PyObject *after_cols = PyTuple_GET_ITEM(e, 11), *before_cols = PyTuple_GET_ITEM(e, 12);
        if (!keeping && PyTuple_Check(after_cols) && PyTuple_GET_SIZE(after_cols) == 0 &&
            PyTuple_Check(before_cols) && PyTuple_GET_SIZE(before_cols) == 0) {
            event = Py_NewRef(e); /* nothing to change */
        } else {
            PyObject *new_parts =
                keeping ? PyTuple_Pack(4, PyTuple_GET_ITEM(parts, 0), kept,
                                       kept_before ? kept_before : before,
                                       PyTuple_GET_ITEM(parts, 3))
                        : Py_NewRef(parts);
            Py_XDECREF(kept);
            Py_XDECREF(kept_before);
            event = new_parts ? PyTuple_New(EVENT_SIZE) : NULL;
            if (!event) {
                Py_XDECREF(new_parts);
                goto done;
            }
            for (int k = 0; k < EVENT_SIZE - 1; k++)
                PyTuple_SET_ITEM(event, k,
                                 Py_NewRef(k == 11 || k == 12 ? empty : PyTuple_GET_ITEM(e, k)));
            PyTuple_SET_ITEM(event, EVENT_SIZE - 1, new_parts);
        }
        PyObject *tokens = none_tokens;
        if (make != Py_None) {
            long io = PyLong_AsLong(PyTuple_GET_ITEM(e, 8));
            if (io == -1 && PyErr_Occurred()) {
                Py_DECREF(event);
                goto done;
            }
            int k = 0;
            while (k < nios && io_keys[k] != io) k++;
            if (k < nios) {
                tokens = io_vals[k];
            } else {
                tokens = PyObject_CallOneArg(make, PyTuple_GET_ITEM(e, 8));
                if (tokens && !PyBytes_Check(tokens)) {
                    PyErr_SetString(PyExc_TypeError, "select: make(io) gives bytes");
                    Py_CLEAR(tokens);
                }
                if (!tokens) {
                    Py_DECREF(event);
                    goto done;
                }
                if (nios < MAX_IOS) {
                    io_keys[nios] = io;
                    io_vals[nios++] = tokens; /* owned by the table until the end */
                } else {
                    PyObject *pair = PyTuple_Pack(2, event, tokens);
                    Py_DECREF(event);
                    Py_DECREF(tokens);
                    if (!pair || PyList_Append(out, pair) < 0) {
                        Py_XDECREF(pair);
                        goto done;
                    }
                    Py_DECREF(pair);
                    continue;
                }
            }
        }
        PyObject *pair = PyTuple_Pack(2, event, tokens);
        Py_DECREF(event);
        if (!pair || PyList_Append(out, pair) < 0) {
            Py_XDECREF(pair);
            goto done;
        }
        Py_DECREF(pair);
    }
    result = Py_NewRef(out);
    goto done;
decline:
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(heap);
    for (int k = 0; k < nios; k++) Py_DECREF(io_vals[k]);
    Py_XDECREF(out);
    Py_XDECREF(empty);
    Py_XDECREF(none_tokens);
    if (keeping) PyBuffer_Release(&keep);
    return result;
}

/* entries(columns, max_value): engine.trail.codec.encode_columns in C, the column entries
 * of ((index, text or None), ...): None when it would raise (an index out of order or
 * above 0xFFFF, a value that is not text, not UTF-8 or longer than max_value bytes), and
 * encode_columns says why. */
static PyObject *entries(PyObject *mod, PyObject *args) {
    PyObject *columns;
    Py_ssize_t max_value;
    if (!PyArg_ParseTuple(args, "O!n", &PyTuple_Type, &columns, &max_value)) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(columns), total = 0, i;
    long last = -1;
    for (i = 0; i < n; i++) {
        PyObject *c = PyTuple_GET_ITEM(columns, i);
        if (!PyTuple_Check(c) || PyTuple_GET_SIZE(c) != 2 || !PyLong_CheckExact(PyTuple_GET_ITEM(c, 0)))
            Py_RETURN_NONE;
        long index = PyLong_AsLong(PyTuple_GET_ITEM(c, 0));
        if (index == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        if (index <= last || index > 0xFFFF) Py_RETURN_NONE;
        last = index;
        PyObject *v = PyTuple_GET_ITEM(c, 1);
        Py_ssize_t size = 0;
        if (v != Py_None) {
            if (!PyUnicode_CheckExact(v) || !PyUnicode_AsUTF8AndSize(v, &size)) {
                PyErr_Clear();
                Py_RETURN_NONE;
            }
            if (size > max_value || size > 0xFFFF - 4) Py_RETURN_NONE;
        }
        total += ENTRY + size;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, total);
    if (!out) return NULL;
    uint8_t *o = (uint8_t *)PyBytes_AS_STRING(out);
    for (i = 0; i < n; i++) {
        PyObject *c = PyTuple_GET_ITEM(columns, i), *v = PyTuple_GET_ITEM(c, 1);
        unsigned index = (unsigned)PyLong_AsLong(PyTuple_GET_ITEM(c, 0));
        Py_ssize_t size = 0;
        const char *raw = v == Py_None ? NULL : PyUnicode_AsUTF8AndSize(v, &size);
        unsigned head[4] = {index, (unsigned)(4 + size), raw ? NULL_ABSENT : NULL_PRESENT,
                            (unsigned)size};
        for (int k = 0; k < 4; k++) {
            o[2 * k] = (uint8_t)(head[k] >> 8);
            o[2 * k + 1] = (uint8_t)head[k];
        }
        if (size) memcpy(o + ENTRY, raw, (size_t)size);
        o += ENTRY + size;
    }
    return out;
}

static PyMethodDef methods[] = {
    {"rows", rows, METH_VARARGS,
     "rows(rows, table, slots, nslots, keep, missing) -> (positions, columns, events) | None"},
    {"select", select_rows, METH_VARARGS,
     "select(rows, table, keep, conds, make) -> [(event, tokens)] | None: a transaction's "
     "rows with their TABLE rule applied (tablerules.select_rows in C)"},
    {"entries", entries, METH_VARARGS,
     "entries(columns, max_value) -> bytes | None: engine.trail.codec.encode_columns in C"},
    {"scan", scan, METH_VARARGS,
     "scan(data, reads, keep) -> (values, kept) | None: tablerules.scan_entries in C"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "rowscan",
    .m_doc = "The Extract's TABLE row options: a data area's column entries scanned.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit_rowscan(void) { return PyModule_Create(&module); }
