/*
 * trailkit: the trail codec's two per-record loops of the Extract's hot path, in C.
 *
 * - records(rows, tokens, sequence, io_time_us, trans_inds, delete_io[, user]) is the loop
 *   of engine/extract/miner._records: the row records of one transaction, each made by
 *   engine/trail/codec.row_record from the parts the miner put in its event, concatenated;
 *   ``user`` (a list of bytes, one per row, or None) adds each row's user token entries
 *   after the commit tokens. None when a record would pass a limit (codec.row_record then
 *   says which).
 * - count_records(buf) is engine/trail/writer.count_records: how many records
 *   concatenated bytes hold, each envelope checked; -1 when one is wrong
 *   (writer.count_records then says what).
 * - seal(buf) is engine/trail/checksum.seal_records: each of concatenated records with a
 *   CRC-32 token ('C', info 0, length 4) appended to its T area (a T area added when it has
 *   none), the CRC over every byte before the value. None when an envelope or a section is
 *   wrong or a record would pass 65535 bytes (checksum.seal_records then says which).
 * - finish(blobs, tokens, io_time_us, trans_inds, first, total[, user]) is
 *   engine/extract/assemble.finish_fragments: the templates of a transaction's fragments
 *   (concatenated row records with codec.row_record's defaults, made in the Spark tasks)
 *   finished as codec.finalize finishes one: TransInd by the record's place among
 *   ``total`` (this call's first record is number ``first``), the IO time, and on record 0
 *   the commit tokens appended to its T area; ``user`` (a list of bytes, one per record of
 *   this call, or None) appends each record's user token entries after them. None when an
 *   envelope is wrong or a record would pass 65535 bytes (finish_fragments then says
 *   which).
 *
 * The layout (docs/trail_format.md, engine/trail/layout.py) is big-endian: a record is the
 * G section, the H section with the 35-byte row header and the table name, the B (key
 * before image, when there is one), D and T (tokens: ORAROWID, then the extra tokens)
 * sections, and the Z trailer; G and Z carry the whole record's length.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "crc32.h"
#include "entries.h"

#define SECTION 4
#define ROW_HEADER 35
#define MIN_RECORD (3 * SECTION)
#define MAX_RECORD 0xFFFF
#define MAX_TABLE_NAME 512
#define ROWID_TOKEN_LEN 20 /* 18 characters and the 2-byte suffix */

static void be16(uint8_t *p, unsigned v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void be32(uint8_t *p, uint32_t v) {
    be16(p, v >> 16);
    be16(p + 2, v & 0xFFFF);
}

static void be64(uint8_t *p, uint64_t v) {
    be32(p, (uint32_t)(v >> 32));
    be32(p + 4, (uint32_t)v);
}

static uint8_t *section(uint8_t *p, char tag, unsigned flag, unsigned len) {
    p[0] = (uint8_t)tag;
    p[1] = (uint8_t)flag;
    be16(p + 2, len);
    return p + SECTION;
}

static uint8_t *put(uint8_t *p, const char *s, Py_ssize_t n) {
    memcpy(p, s, (size_t)n);
    return p + n;
}

typedef struct {
    const char *name, *data, *before, *rowid;
    Py_ssize_t nname, ndata, nbefore, nrowid; /* nrowid -1: no ROWID */
    unsigned io;
    uint64_t pos;
    Py_ssize_t length;
    const char *user; /* the row's user token entries (TABLE TOKENS) */
    Py_ssize_t nuser;
} Row;

/* The parts of an event (codec.row_record's arguments); -1 with an exception set. */
static int row_of(PyObject *e, Row *r) {
    if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) < 18) {
        PyErr_SetString(PyExc_TypeError, "a row event is an 18-tuple");
        return -1;
    }
    PyObject *parts = PyTuple_GET_ITEM(e, 17);
    if (!PyTuple_Check(parts) || PyTuple_GET_SIZE(parts) != 4) {
        PyErr_SetString(PyExc_TypeError, "a row event's parts are a 4-tuple");
        return -1;
    }
    if (PyBytes_AsStringAndSize(PyTuple_GET_ITEM(parts, 0), (char **)&r->name, &r->nname) < 0 ||
        PyBytes_AsStringAndSize(PyTuple_GET_ITEM(parts, 1), (char **)&r->data, &r->ndata) < 0 ||
        PyBytes_AsStringAndSize(PyTuple_GET_ITEM(parts, 2), (char **)&r->before, &r->nbefore) <
            0)
        return -1;
    PyObject *rowid = PyTuple_GET_ITEM(parts, 3);
    if (rowid == Py_None) {
        r->rowid = NULL;
        r->nrowid = -1;
    } else if (PyBytes_AsStringAndSize(rowid, (char **)&r->rowid, &r->nrowid) < 0) {
        return -1;
    }
    r->io = (unsigned)PyLong_AsUnsignedLong(PyTuple_GET_ITEM(e, 8));
    r->pos = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(e, 3));
    return PyErr_Occurred() ? -1 : 0;
}

/* The TransInd values (BEGIN, MIDDLE, END, WHOLE) from a 4-tuple; -1 with an exception. */
static int trans_inds(PyObject *inds, unsigned ind[4]) {
    if (PyTuple_GET_SIZE(inds) != 4) {
        PyErr_SetString(PyExc_ValueError, "trans_inds: BEGIN, MIDDLE, END, WHOLE");
        return -1;
    }
    for (int i = 0; i < 4; i++) ind[i] = (unsigned)PyLong_AsUnsignedLong(PyTuple_GET_ITEM(inds, i));
    return PyErr_Occurred() ? -1 : 0;
}

/* The records of rows r[0..n) (their lengths set by row_length), concatenated: TransInd
 * by place among n, the commit ``tokens`` on record 0, each row's user tokens after them. */
static PyObject *assemble(const Row *r, Py_ssize_t n, Py_ssize_t total, const char *tokens,
                          Py_ssize_t ntokens, unsigned long sequence, long long io_time,
                          const unsigned ind[4], unsigned delete_io) {
    PyObject *result = PyBytes_FromStringAndSize(NULL, total);
    if (!result) return NULL;
    uint8_t *p = (uint8_t *)PyBytes_AS_STRING(result);
    for (Py_ssize_t i = 0; i < n; i++) {
        const Row *w = &r[i];
        unsigned t = n == 1 ? ind[3] : i == 0 ? ind[0] : i == n - 1 ? ind[2] : ind[1];
        p = section(p, 'G', 1, (unsigned)w->length);
        p = section(p, 'H', 0, (unsigned)(ROW_HEADER + w->nname));
        /* the row header: codec._TEMPLATE_HEAD after its two sections */
        p[0] = 'E';
        p[1] = 0;
        p[2] = (uint8_t)(w->io & 0xFF); /* layout.BEFORE_IMAGE (0x100): a before image, B */
        p[3] = (uint8_t)t;
        p[4] = 0;
        p[5] = 'N';
        p[6] = 4;
        p[7] = w->io == delete_io || (w->io & 0x100) ? 'B' : 'A';
        p[8] = 0;
        p[9] = 'R';
        p[10] = 0;
        be64(p + 11, (uint64_t)io_time);
        be32(p + 19, (uint32_t)sequence);
        be64(p + 23, w->pos);
        be16(p + 31, 1);
        be16(p + 33, (unsigned)w->nname);
        p = put(p + ROW_HEADER, w->name, w->nname);
        if (w->nbefore) {
            p = section(p, 'B', 0, (unsigned)w->nbefore);
            p = put(p, w->before, w->nbefore);
        }
        p = section(p, 'D', 0, (unsigned)w->ndata);
        p = put(p, w->data, w->ndata);
        Py_ssize_t tok = (i == 0 ? ntokens : 0) + (w->nrowid >= 0 ? SECTION + w->nrowid + 2 : 0) +
                         w->nuser;
        if (tok) {
            p = section(p, 'T', 0, (unsigned)tok);
            if (w->nrowid >= 0) {
                p = section(p, 'R', 0, ROWID_TOKEN_LEN); /* as codec._ROWID_TOKEN_HEAD */
                p = put(p, w->rowid, w->nrowid);
                p = put(p, "\x00\x01", 2);
            }
            if (i == 0) p = put(p, tokens, ntokens);
            if (w->nuser) p = put(p, w->user, w->nuser);
        }
        p = section(p, 'Z', 1, (unsigned)w->length);
    }
    return result;
}

/* Row i's record length (set in r->length); 0 when it would pass a limit. */
static Py_ssize_t row_length(Row *r, Py_ssize_t i, Py_ssize_t ntokens) {
    Py_ssize_t tok =
        (i == 0 ? ntokens : 0) + (r->nrowid >= 0 ? SECTION + r->nrowid + 2 : 0) + r->nuser;
    Py_ssize_t len = 4 * SECTION + ROW_HEADER + r->nname + r->ndata;
    if (r->nbefore) len += SECTION + r->nbefore;
    if (tok) len += SECTION + tok;
    if (r->nname > MAX_TABLE_NAME || len > MAX_RECORD) return 0;
    return r->length = len;
}

static PyObject *records(PyObject *mod, PyObject *args) {
    PyObject *rows, *inds, *user = Py_None;
    const char *tokens;
    Py_ssize_t ntokens;
    unsigned long sequence;
    long long io_time;
    unsigned delete_io;
    if (!PyArg_ParseTuple(args, "O!y#kLO!I|O", &PyList_Type, &rows, &tokens, &ntokens,
                          &sequence, &io_time, &PyTuple_Type, &inds, &delete_io, &user))
        return NULL;
    if (user != Py_None &&
        (!PyList_Check(user) || PyList_GET_SIZE(user) != PyList_GET_SIZE(rows))) {
        PyErr_SetString(PyExc_ValueError, "user: a list of bytes, one per row");
        return NULL;
    }
    unsigned ind[4];
    if (trans_inds(inds, ind) < 0) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(rows);
    Row *r = PyMem_Calloc((size_t)n + 1, sizeof(Row));
    if (!r) return PyErr_NoMemory();
    Py_ssize_t total = 0;
    PyObject *result = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (row_of(PyList_GET_ITEM(rows, i), &r[i]) < 0) goto done;
        if (user != Py_None &&
            PyBytes_AsStringAndSize(PyList_GET_ITEM(user, i), (char **)&r[i].user,
                                    &r[i].nuser) < 0)
            goto done;
        Py_ssize_t len = row_length(&r[i], i, ntokens);
        if (!len) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        total += len;
    }
    result = assemble(r, n, total, tokens, ntokens, sequence, io_time, ind, delete_io);
done:
    PyMem_Free(r);
    return result;
}

/* select_records(rows, table, keep, conds, make, tokens, sequence, io_time_us, trans_inds,
 * delete_io): rowscan.select and records in one pass (miner._select_records_py is its
 * twin): the rows of ``table`` that pass each of ``conds`` (their data area's value of the
 * column, decimal digits, compared as an integer; no entry or NULL fails), their data area
 * and before image cut to the ``keep`` flags when given, ``make(io)`` (None: none) their
 * user tokens, asked once per operation, made into the transaction's finished records.
 * (records, rows kept, ((io, rows), ...) in order of first appearance); None when it cannot
 * say: a row of another table or without parts, a malformed area, a compared value that
 * is no plain number, more than 16 operations, a record past a limit. */
static PyObject *select_records(PyObject *mod, PyObject *args) {
    PyObject *list, *table, *keep_obj, *conds, *make, *inds;
    const char *tokens;
    Py_ssize_t ntokens;
    unsigned long sequence;
    long long io_time;
    unsigned delete_io;
    if (!PyArg_ParseTuple(args, "O!UOO!Oy#kLO!I", &PyList_Type, &list, &table, &keep_obj,
                          &PyTuple_Type, &conds, &make, &tokens, &ntokens, &sequence, &io_time,
                          &PyTuple_Type, &inds, &delete_io))
        return NULL;
    unsigned ind[4];
    if (trans_inds(inds, ind) < 0) return NULL;
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
    Py_ssize_t io_rows[MAX_IOS];
    int nios = 0;
    PyObject *result = NULL;
    uint8_t *arena = NULL;
    Row *r = PyMem_Calloc((size_t)n + 1, sizeof(Row));
    if (!r) {
        PyErr_NoMemory();
        goto done;
    }
    /* the cut areas: at most the areas themselves */
    Py_ssize_t room = 0, used = 0, kept = 0, total = 0;
    for (i = 0; keeping && i < n; i++) {
        PyObject *e = PyList_GET_ITEM(list, i);
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) < 18) goto decline;
        PyObject *parts = PyTuple_GET_ITEM(e, 17);
        if (!PyTuple_Check(parts) || PyTuple_GET_SIZE(parts) != 4 ||
            !PyBytes_Check(PyTuple_GET_ITEM(parts, 1)) || !PyBytes_Check(PyTuple_GET_ITEM(parts, 2)))
            goto decline;
        room += PyBytes_GET_SIZE(PyTuple_GET_ITEM(parts, 1)) +
                PyBytes_GET_SIZE(PyTuple_GET_ITEM(parts, 2));
    }
    if (keeping && !(arena = PyMem_Malloc((size_t)room + 1))) {
        PyErr_NoMemory();
        goto done;
    }
    for (i = 0; i < n; i++) {
        PyObject *e = PyList_GET_ITEM(list, i);
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 18) goto decline;
        PyObject *name = PyTuple_GET_ITEM(e, 9), *parts = PyTuple_GET_ITEM(e, 17);
        int same = name == table ? 1 : PyObject_RichCompareBool(name, table, Py_EQ);
        if (same < 0) goto done;
        if (!same || !PyTuple_Check(parts) || PyTuple_GET_SIZE(parts) != 4 ||
            !PyBytes_Check(PyTuple_GET_ITEM(parts, 1)) || !PyBytes_Check(PyTuple_GET_ITEM(parts, 2)))
            goto decline;
        Row *w = &r[kept];
        memset(w, 0, sizeof(Row));
        if (row_of(e, w) < 0) {
            if (!PyErr_ExceptionMatches(PyExc_TypeError)) goto done;
            PyErr_Clear(); /* (a name or ROWID that is not bytes: the Python paths say) */
            goto decline;
        }
        Py_ssize_t out_len = 0;
        uint8_t *cut_to = keeping ? arena + used : NULL;
        int bad = cond_area((const uint8_t *)w->data, w->ndata, nconds, cols, found, num,
                            keeping ? &keep : NULL, cut_to, &out_len, 0);
        int pass = 1;
        for (c = 0; !bad && c < nconds; c++) {
            if (found[c] == 3) bad = 1; /* text that is no plain number: the Python path */
            else if (found[c] != 2 || !holds(ops[c], num[c], lits[c])) pass = 0;
        }
        if (bad) {
            if (bad > 0 && !PyErr_Occurred()) goto decline;
            goto done;
        }
        Py_ssize_t before_len = 0;
        if (keeping && w->nbefore > 0) {
            /* the before image loses the columns too (checked whether the row passes) */
            int bfound[MAX_CONDS];
            long long bnum[MAX_CONDS];
            bad = cond_area((const uint8_t *)w->before, w->nbefore, nconds, cols, bfound, bnum,
                            &keep, cut_to + out_len, &before_len, 1);
            if (bad) {
                if (bad > 0 && !PyErr_Occurred()) goto decline;
                goto done;
            }
        }
        if (!pass) continue;
        if (keeping) {
            w->data = (const char *)cut_to;
            w->ndata = out_len;
            if (w->nbefore > 0) {
                w->before = (const char *)cut_to + out_len;
                w->nbefore = before_len;
            }
            used += out_len + before_len;
        }
        long io = (long)w->io;
        int k = 0;
        while (k < nios && io_keys[k] != io) k++;
        if (k == nios) {
            if (nios == MAX_IOS) goto decline;
            PyObject *made = make == Py_None ? PyBytes_FromStringAndSize(NULL, 0)
                                             : PyObject_CallOneArg(make, PyTuple_GET_ITEM(e, 8));
            if (made && !PyBytes_Check(made)) {
                PyErr_SetString(PyExc_TypeError, "select: make(io) gives bytes");
                Py_CLEAR(made);
            }
            if (!made) goto done;
            io_keys[k] = io;
            io_vals[k] = made;
            io_rows[k] = 0;
            nios++;
        }
        io_rows[k]++;
        w->user = PyBytes_AS_STRING(io_vals[k]);
        w->nuser = PyBytes_GET_SIZE(io_vals[k]);
        kept++;
    }
    for (i = 0; i < kept; i++) {
        Py_ssize_t len = row_length(&r[i], i, ntokens);
        if (!len) goto decline;
        total += len;
    }
    PyObject *data = assemble(r, kept, total, tokens, ntokens, sequence, io_time, ind, delete_io);
    PyObject *counts = data ? PyTuple_New(nios) : NULL;
    for (int k = 0; counts && k < nios; k++) {
        PyObject *pair = Py_BuildValue("(ln)", io_keys[k], io_rows[k]);
        if (!pair) Py_CLEAR(counts);
        else PyTuple_SET_ITEM(counts, k, pair);
    }
    if (counts) result = Py_BuildValue("(NnN)", data, kept, counts);
    else Py_XDECREF(data);
    goto done;
decline:
    result = Py_NewRef(Py_None);
done:
    for (int k = 0; k < nios; k++) Py_DECREF(io_vals[k]);
    PyMem_Free(arena);
    PyMem_Free(r);
    if (keeping) PyBuffer_Release(&keep);
    return result;
}

/* The length of the record at b[pos] (size bytes in all) when its envelope is whole and
 * right (envelope.record_length), else -1. */
static Py_ssize_t envelope(const uint8_t *b, Py_ssize_t pos, Py_ssize_t size) {
    if (size - pos < SECTION || b[pos] != 'G' || b[pos + 1] != 1) return -1;
    Py_ssize_t len = b[pos + 2] << 8 | b[pos + 3];
    if (len < MIN_RECORD || size - pos < len) return -1;
    const uint8_t *z = b + pos + len - SECTION;
    if (z[0] != 'Z' || z[1] != 1 || (z[2] << 8 | z[3]) != len) return -1;
    return len;
}

static PyObject *count_records(PyObject *mod, PyObject *arg) {
    Py_buffer v;
    if (PyObject_GetBuffer(arg, &v, PyBUF_SIMPLE) < 0) return NULL;
    const uint8_t *b = v.buf;
    Py_ssize_t pos = 0, n = 0, size = v.len;
    while (pos < size) {
        Py_ssize_t len = envelope(b, pos, size);
        if (len < 0) goto bad;
        pos += len;
        n++;
    }
    PyBuffer_Release(&v);
    return PyLong_FromSsize_t(n);
bad:
    PyBuffer_Release(&v);
    return PyLong_FromLong(-1);
}

/* The end of the last inner section of the record at b (length len), and its tag; -1 when
 * the sections do not tile the record (checksum.seal_record's sections() walk). */
static Py_ssize_t last_section(const uint8_t *b, Py_ssize_t len, uint8_t *tag) {
    Py_ssize_t pos = SECTION, end = len - SECTION, start = -1;
    while (pos < end) {
        if (end - pos < SECTION || b[pos + 1] != 0) return -1;
        Py_ssize_t size = b[pos + 2] << 8 | b[pos + 3];
        if (pos + SECTION + size > end) return -1;
        *tag = b[pos];
        start = pos;
        pos += SECTION + size;
    }
    return start;
}

/* Copy the record at r (length len) to out with its T area grown by ``more`` bytes (a T
 * area added when it has none), up to the end of that area; the caller writes the new
 * bytes and the Z trailer. ``grown`` is the record's new length. Returns where to write. */
static uint8_t *open_t_area(uint8_t *out, const uint8_t *r, Py_ssize_t len, Py_ssize_t more,
                            Py_ssize_t grown) {
    uint8_t tag = 0;
    Py_ssize_t last = last_section(r, len, &tag);
    uint8_t *p = section(out, 'G', 1, (unsigned)grown);
    if (tag == 'T') {
        Py_ssize_t tsize = r[last + 2] << 8 | r[last + 3];
        p = put(p, (const char *)r + SECTION, last - SECTION);
        p = section(p, 'T', 0, (unsigned)(tsize + more));
        return put(p, (const char *)r + last + SECTION, tsize);
    }
    p = put(p, (const char *)r + SECTION, len - 2 * SECTION);
    return section(p, 'T', 0, (unsigned)more);
}

#define CHECKSUM_GROWTH 8 /* the token entry: 4-byte header and the 4-byte CRC */

static PyObject *seal(PyObject *mod, PyObject *arg) {
    Py_buffer v;
    if (PyObject_GetBuffer(arg, &v, PyBUF_SIMPLE) < 0) return NULL;
    const uint8_t *b = v.buf;
    Py_ssize_t pos = 0, size = v.len, total = 0;
    /* First pass: check every envelope and the sections, size the output. */
    while (pos < size) {
        Py_ssize_t len = envelope(b, pos, size);
        if (len < 0) goto bad;
        uint8_t tag = 0;
        if (last_section(b + pos, len, &tag) < 0) goto bad;
        Py_ssize_t grown = len + CHECKSUM_GROWTH + (tag == 'T' ? 0 : SECTION);
        if (grown > MAX_RECORD) goto bad;
        total += grown;
        pos += len;
    }
    PyObject *result = PyBytes_FromStringAndSize(NULL, total);
    if (!result) {
        PyBuffer_Release(&v);
        return NULL;
    }
    uint8_t *out = (uint8_t *)PyBytes_AS_STRING(result);
    for (pos = 0; pos < size;) {
        const uint8_t *r = b + pos;
        Py_ssize_t len = r[2] << 8 | r[3];
        uint8_t tag = 0;
        last_section(r, len, &tag);
        Py_ssize_t grown = len + CHECKSUM_GROWTH + (tag == 'T' ? 0 : SECTION);
        uint8_t *p = open_t_area(out, r, len, CHECKSUM_GROWTH, grown);
        p = section(p, 'C', 0, 4);
        be32(p, crc32_of(out, (size_t)(p - out)));
        p = section(p + 4, 'Z', 1, (unsigned)grown);
        out = p;
        pos += len;
    }
    PyBuffer_Release(&v);
    return result;
bad:
    PyBuffer_Release(&v);
    Py_RETURN_NONE;
}


#define AT_TRANS_IND (2 * SECTION + 3)
#define AT_IO_TIME (2 * SECTION + 11)

/* The user token bytes of record r (0-based in this call) from ``user`` (a list of bytes,
 * one per record, or None); -1 with an exception set. */
static int user_of(PyObject *user, Py_ssize_t r, const char **s, Py_ssize_t *n) {
    *s = NULL;
    *n = 0;
    if (user == Py_None) return 0;
    if (r >= PyList_GET_SIZE(user)) {
        PyErr_SetString(PyExc_ValueError, "user: a list of bytes, one per record");
        return -1;
    }
    return PyBytes_AsStringAndSize(PyList_GET_ITEM(user, r), (char **)s, n);
}

static PyObject *finish(PyObject *mod, PyObject *args) {
    PyObject *blobs, *inds, *user = Py_None;
    const char *tokens;
    Py_ssize_t ntokens, first, total;
    long long io_time;
    if (!PyArg_ParseTuple(args, "O!y#LO!nn|O", &PyList_Type, &blobs, &tokens, &ntokens, &io_time,
                          &PyTuple_Type, &inds, &first, &total, &user))
        return NULL;
    if (user != Py_None && !PyList_Check(user)) {
        PyErr_SetString(PyExc_TypeError, "user: a list of bytes, one per record, or None");
        return NULL;
    }
    unsigned ind[4];
    if (trans_inds(inds, ind) < 0) return NULL;
    Py_ssize_t nblobs = PyList_GET_SIZE(blobs), size = 0, k = first, r = 0;
    /* First pass: every envelope whole, each record's growth (the commit tokens on record
     * 0, its user tokens) within the limit, and the size of the output. */
    for (Py_ssize_t j = 0; j < nblobs; j++) {
        PyObject *blob = PyList_GET_ITEM(blobs, j);
        if (!PyBytes_Check(blob)) {
            PyErr_SetString(PyExc_TypeError, "fragments are bytes");
            return NULL;
        }
        const uint8_t *b = (const uint8_t *)PyBytes_AS_STRING(blob);
        Py_ssize_t n = PyBytes_GET_SIZE(blob);
        for (Py_ssize_t pos = 0; pos < n; k++, r++) {
            Py_ssize_t len = envelope(b, pos, n);
            if (len < MIN_RECORD + ROW_HEADER) Py_RETURN_NONE;
            const char *us;
            Py_ssize_t nu;
            if (user_of(user, r, &us, &nu) < 0) return NULL;
            Py_ssize_t more = nu + (k == 0 ? ntokens : 0);
            if (more) {
                uint8_t tag = 0;
                if (last_section(b + pos, len, &tag) < 0) Py_RETURN_NONE;
                Py_ssize_t grow = more + (tag == 'T' ? 0 : SECTION);
                if (len + grow > MAX_RECORD) Py_RETURN_NONE;
                size += grow;
            }
            pos += len;
        }
        size += n;
    }
    if (user != Py_None && r != PyList_GET_SIZE(user)) {
        PyErr_SetString(PyExc_ValueError, "user: a list of bytes, one per record");
        return NULL;
    }
    PyObject *result = PyBytes_FromStringAndSize(NULL, size);
    if (!result) return NULL;
    uint8_t *out = (uint8_t *)PyBytes_AS_STRING(result);
    k = first;
    r = 0;
    for (Py_ssize_t j = 0; j < nblobs; j++) {
        PyObject *blob = PyList_GET_ITEM(blobs, j);
        const uint8_t *b = (const uint8_t *)PyBytes_AS_STRING(blob);
        Py_ssize_t n = PyBytes_GET_SIZE(blob);
        for (Py_ssize_t pos = 0; pos < n; k++, r++) {
            const uint8_t *rec = b + pos;
            Py_ssize_t len = rec[2] << 8 | rec[3];
            uint8_t *start = out;
            const char *us;
            Py_ssize_t nu;
            user_of(user, r, &us, &nu); /* (checked in the first pass) */
            Py_ssize_t nt = k == 0 ? ntokens : 0;
            if (nt + nu) {
                uint8_t tag = 0;
                last_section(rec, len, &tag);
                Py_ssize_t grown = len + nt + nu + (tag == 'T' ? 0 : SECTION);
                uint8_t *p = open_t_area(out, rec, len, nt + nu, grown);
                if (nt) p = put(p, tokens, nt);
                if (nu) p = put(p, us, nu);
                out = section(p, 'Z', 1, (unsigned)grown);
            } else {
                out = put(out, (const char *)rec, len);
            }
            unsigned t = total == 1 ? ind[3] : k == 0 ? ind[0] : k == total - 1 ? ind[2] : ind[1];
            start[AT_TRANS_IND] = (uint8_t)t;
            be64(start + AT_IO_TIME, (uint64_t)io_time);
            pos += len;
        }
    }
    return result;
}

static PyMethodDef methods[] = {
    {"records", records, METH_VARARGS,
     "records(rows, tokens, sequence, io_time_us, trans_inds, delete_io, user=None) -> "
     "bytes | None"},
    {"select_records", select_records, METH_VARARGS,
     "select_records(rows, table, keep, conds, make, tokens, sequence, io_time_us, trans_inds, "
     "delete_io) -> (bytes, kept, ((io, rows), ...)) | None"},
    {"count_records", count_records, METH_O, "count_records(buf) -> int (-1: a bad envelope)"},
    {"finish", finish, METH_VARARGS,
     "finish(blobs, tokens, io_time_us, trans_inds, first, total, user=None) -> bytes | None"},
    {"seal", seal, METH_O, "seal(buf) -> bytes | None: each record with its CRC-32 token"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "trailkit",
    .m_doc = "The trail codec's per-record loops of the Extract's hot path.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit_trailkit(void) {
    crc_init();
    return PyModule_Create(&module);
}
