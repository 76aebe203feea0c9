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

#define ENTRY 8
#define NULL_ABSENT 0x0000
#define NULL_PRESENT 0xFFFF

static unsigned be16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }

static int flagged(const Py_buffer *mask, unsigned index) {
    return (Py_ssize_t)index < mask->len && ((const uint8_t *)mask->buf)[index] != 0;
}

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

/* The entries of one data area: the value of each column whose slot (a byte per column
 * index: 0 none, k the slot k - 1) is set goes to vals[slot] (a new reference; slots not
 * met keep what they hold), and the entries flagged in keep (when given) are copied to
 * out (advancing *out_len). 1 when the area is malformed, -1 with an exception set. */
static int walk(const uint8_t *b, Py_ssize_t end, const Py_buffer *slots, PyObject **vals,
                const Py_buffer *keep, uint8_t *out, Py_ssize_t *out_len) {
    Py_ssize_t pos = 0;
    long last = -1;
    while (pos < end) {
        if (end - pos < ENTRY) return 1;
        unsigned index = be16(b + pos), length = be16(b + pos + 2);
        unsigned null = be16(b + pos + 4), vlen = be16(b + pos + 6);
        Py_ssize_t stop = pos + ENTRY + vlen;
        if (length != 4 + vlen || (long)index <= last || stop > end) return 1;
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

static PyMethodDef methods[] = {
    {"rows", rows, METH_VARARGS,
     "rows(rows, table, slots, nslots, keep, missing) -> (positions, columns, events) | None"},
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
