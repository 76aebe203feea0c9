/*
 * trailcols: trail records read into columns in one pass (the lakehouse Replicat's reader,
 * engine/replicat/lakeread.py; its pure-Python twin is lakeread.scan_py).
 *
 * scan(buf, offset, end, checksums, max_records, max_columns) walks the records of
 * buf[offset:end] while each is a plain row change: a data record (G, H, D, optional T, Z;
 * engine/trail/layout.py, docs/trail_format.md) of IOType Delete (3), Insert (5), Update
 * (10) or FieldComp (15), not Continued, without a before-image area, whose column indexes
 * are below max_columns, whose values, table name and LOGCSN / TRANID / ORAROWID tokens are
 * UTF-8, and (checksums true) whose CRC-32 token matches its bytes (engine/trail/checksum.py).
 * It stops at the first record that is anything else, which the caller decodes with the
 * trail codec (a table definition, a file header, a key update, a corrupt record: the
 * codec says what it is), at the end of the bytes (a record cut short there included), or
 * after max_records records. It returns
 *
 *   (n, stop, reason, rba, io_time, table_id, io_type, trans_ind, before_after,
 *    names, tokens, columns)
 *
 * n records read, stop the offset after the last (the next record's), reason 0 (end of
 * the bytes), 1 (max_records) or 2 (the record at stop is not plain); rba (int64), io_time
 * (int64), table_id (int32), io_type, trans_ind, before_after (uint8: 'A' / 'B') as bytes
 * of n native-endian items, rba the record's offset in buf; names the table names
 * (table_id indexes it); tokens [(i, logcsn or None, tranid or None)] for the records that
 * carry either (the first of each in the T area, as the codec takes them); columns, one per
 * column index up to the highest met: (data, offsets, validity, present), data the UTF-8
 * values concatenated, offsets n + 1 int32, validity a little-endian bitmap of n bits (a
 * value that is not NULL), present n bytes (1: the record carries the column, NULL or
 * not): an Arrow string array's buffers, and which records carry the column.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crc32.h"

#define SECTION 4
#define ROW_HEADER 35
#define MIN_RECORD (3 * SECTION)
#define MIN_SEALED (3 * SECTION + 8)
#define COLUMN_ENTRY 8
#define TOKEN_ENTRY 4

static unsigned be16(const uint8_t *p) { return ((unsigned)p[0] << 8) | p[1]; }

static uint32_t be32(const uint8_t *p) { return ((uint32_t)be16(p) << 16) | be16(p + 2); }

static int64_t be64s(const uint8_t *p) {
    return (int64_t)(((uint64_t)be32(p) << 32) | be32(p + 4));
}

/* Valid UTF-8 as Python's decoder takes it (no surrogates, no overlongs, <= U+10FFFF). */
static int utf8_ok(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
            k = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            cp = c & 0x07;
        } else {
            return 0;
        }
        for (size_t j = 1; j <= k; j++) {
            if (i + j >= n || (s[i + j] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if ((k == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        i += k + 1;
    }
    return 1;
}

typedef struct {
    char *data;
    Py_ssize_t len, cap;
    int32_t *offsets; /* n + 1 */
    uint8_t *valid;   /* one byte per record here; packed into bits at the end */
    uint8_t *present;
} Column;

typedef struct {
    Py_ssize_t n, cap;
    int64_t *rba, *io_time;
    int32_t *table_id;
    uint8_t *io_type, *trans_ind, *before_after;
    Column *cols;
    Py_ssize_t ncols;
} Out;

static int grow(void **p, Py_ssize_t items, size_t size) {
    void *q = realloc(*p, (size_t)items * size);
    if (q == NULL) return -1;
    *p = q;
    return 0;
}

static int out_reserve(Out *o, Py_ssize_t need) {
    if (need <= o->cap) return 0;
    Py_ssize_t cap = o->cap ? o->cap : 1024;
    while (cap < need) cap *= 2;
    if (grow((void **)&o->rba, cap, 8) || grow((void **)&o->io_time, cap, 8) ||
        grow((void **)&o->table_id, cap, 4) || grow((void **)&o->io_type, cap, 1) ||
        grow((void **)&o->trans_ind, cap, 1) || grow((void **)&o->before_after, cap, 1))
        return -1;
    for (Py_ssize_t c = 0; c < o->ncols; c++) {
        Column *col = &o->cols[c];
        if (grow((void **)&col->offsets, cap + 1, 4) || grow((void **)&col->valid, cap, 1) ||
            grow((void **)&col->present, cap, 1))
            return -1;
    }
    o->cap = cap;
    return 0;
}

/* Columns up to index `want` - 1, each holding o->n absent entries. */
static int out_columns(Out *o, Py_ssize_t want) {
    if (want <= o->ncols) return 0;
    Column *cols = realloc(o->cols, (size_t)want * sizeof(Column));
    if (cols == NULL) return -1;
    o->cols = cols;
    for (Py_ssize_t c = o->ncols; c < want; c++) {
        Column *col = &cols[c];
        memset(col, 0, sizeof(*col));
        Py_ssize_t cap = o->cap ? o->cap : 1;
        col->offsets = calloc((size_t)cap + 1, 4);
        col->valid = calloc((size_t)cap, 1);
        col->present = calloc((size_t)cap, 1);
        o->ncols = c + 1;
        if (!col->offsets || !col->valid || !col->present) return -1;
    }
    return 0;
}

static void out_free(Out *o) {
    free(o->rba);
    free(o->io_time);
    free(o->table_id);
    free(o->io_type);
    free(o->trans_ind);
    free(o->before_after);
    for (Py_ssize_t c = 0; c < o->ncols; c++) {
        free(o->cols[c].data);
        free(o->cols[c].offsets);
        free(o->cols[c].valid);
        free(o->cols[c].present);
    }
    free(o->cols);
}

static int col_append(Column *col, const uint8_t *v, Py_ssize_t n) {
    if (col->len + n > col->cap) {
        Py_ssize_t cap = col->cap ? col->cap : 4096;
        while (cap < col->len + n) cap *= 2;
        if (grow((void **)&col->data, cap, 1)) return -1;
        col->cap = cap;
    }
    memcpy(col->data + col->len, v, (size_t)n);
    col->len += n;
    return 0;
}

typedef struct {
    const uint8_t *data_at, *tok_at;
    Py_ssize_t data_n, tok_n;
    const uint8_t *csn, *tranid;
    Py_ssize_t ncsn, ntranid;
    unsigned max_index; /* highest column index + 1 */
} Parts;

/* 1 when the record at p (length len, envelope checked) is a plain row change. */
static int plain(const uint8_t *p, Py_ssize_t len, int checksums, unsigned max_columns,
                 Parts *out) {
    const uint8_t *end = p + len - SECTION, *q = p + SECTION;
    if (checksums) {
        if (len < MIN_SEALED) return 0;
        const uint8_t *covered = p + len - 4 - SECTION;
        if (covered[-4] != 'C' || covered[-3] != 0 || be16(covered - 2) != 4) return 0;
        if (crc32_of(p, (size_t)(covered - p)) != be32(covered)) return 0;
    }
    /* H */
    if (q + SECTION > end || q[0] != 'H' || q[1] != 0) return 0;
    Py_ssize_t hsize = be16(q + 2);
    const uint8_t *h = q + SECTION;
    if (h + hsize > end || hsize < ROW_HEADER) return 0;
    if (h[0] != 'E') return 0;
    unsigned io = h[2];
    if (!(io == 3 || io == 5 || io == 10 || io == 15)) return 0;
    if (h[3] > 3 || h[5] != 'N') return 0;
    if (!(h[7] == 'A' || h[7] == 'B') || !(h[9] == 'R' || h[9] == 'F')) return 0;
    if (ROW_HEADER + (Py_ssize_t)be16(h + 33) != hsize) return 0;
    if (!utf8_ok(h + ROW_HEADER, (size_t)(hsize - ROW_HEADER))) return 0;
    q = h + hsize;
    /* D, then T */
    memset(out, 0, sizeof(*out));
    for (int k = 0; k < 2 && q < end; k++) {
        if (q + SECTION > end || q[1] != 0) return 0;
        Py_ssize_t size = be16(q + 2);
        if (q + SECTION + size > end) return 0;
        if (k == 0 && q[0] == 'D') {
            out->data_at = q + SECTION;
            out->data_n = size;
        } else if (k == 1 && q[0] == 'T' && out->data_at != NULL) {
            out->tok_at = q + SECTION;
            out->tok_n = size;
        } else {
            return 0;
        }
        q += SECTION + size;
    }
    if (q != end || out->data_at == NULL) return 0;
    /* the column entries */
    const uint8_t *c = out->data_at, *cend = out->data_at + out->data_n;
    long last = -1;
    while (c < cend) {
        if (c + COLUMN_ENTRY > cend) return 0;
        unsigned index = be16(c), length = be16(c + 2), null = be16(c + 4), vlen = be16(c + 6);
        if (length != 4 + vlen || (long)index <= last || index >= max_columns) return 0;
        c += COLUMN_ENTRY;
        if (c + vlen > cend) return 0;
        if (null == 0) {
            if (!utf8_ok(c, vlen)) return 0;
        } else if (!(null == 0xFFFF && vlen == 0)) {
            return 0;
        }
        last = index;
        c += vlen;
    }
    out->max_index = (unsigned)(last + 1);
    /* the tokens */
    const uint8_t *t = out->tok_at, *tend = out->tok_at + out->tok_n;
    while (t != NULL && t < tend) {
        if (t + TOKEN_ENTRY > tend) return 0;
        uint8_t id = t[0], info = t[1];
        Py_ssize_t tlen = be16(t + 2);
        t += TOKEN_ENTRY;
        if (t + tlen > tend) return 0;
        if (id == 'R' && info == 0 && tlen >= 2 && t[tlen - 2] == 0 && t[tlen - 1] == 1) {
            if (!utf8_ok(t, (size_t)(tlen - 2))) return 0;
        } else if (id == 'L' && info == 0 && out->csn == NULL) {
            if (!utf8_ok(t, (size_t)tlen)) return 0;
            out->csn = t;
            out->ncsn = tlen;
        } else if (id == '6' && info == 0 && out->tranid == NULL) {
            if (!utf8_ok(t, (size_t)tlen)) return 0;
            out->tranid = t;
            out->ntranid = tlen;
        }
        t += tlen;
    }
    return 1;
}

static PyObject *text_or_none(const uint8_t *s, Py_ssize_t n) {
    if (s == NULL) Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8((const char *)s, n, "strict");
}

static PyObject *bytes_of(const void *p, Py_ssize_t n) {
    return PyBytes_FromStringAndSize(n ? (const char *)p : "", n);
}

static PyObject *build(Out *o, Py_ssize_t stop, int reason, PyObject *names, PyObject *tokens) {
    Py_ssize_t n = o->n;
    PyObject *cols = PyList_New(o->ncols);
    if (cols == NULL) return NULL;
    Py_ssize_t nbits = (n + 7) / 8;
    for (Py_ssize_t c = 0; c < o->ncols; c++) {
        Column *col = &o->cols[c];
        PyObject *bitmap = PyBytes_FromStringAndSize(NULL, nbits);
        if (bitmap == NULL) {
            Py_DECREF(cols);
            return NULL;
        }
        uint8_t *bits = (uint8_t *)PyBytes_AS_STRING(bitmap);
        memset(bits, 0, (size_t)nbits);
        for (Py_ssize_t i = 0; i < n; i++)
            if (col->valid[i]) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
        PyObject *item = Py_BuildValue("(NNNN)", bytes_of(col->data, col->len),
                                       bytes_of(col->offsets, (n + 1) * 4), bitmap,
                                       bytes_of(col->present, n));
        if (item == NULL) {
            Py_DECREF(cols);
            return NULL;
        }
        PyList_SET_ITEM(cols, c, item);
    }
    return Py_BuildValue("(nniNNNNNNOON)", n, stop, reason, bytes_of(o->rba, n * 8),
                         bytes_of(o->io_time, n * 8), bytes_of(o->table_id, n * 4),
                         bytes_of(o->io_type, n), bytes_of(o->trans_ind, n),
                         bytes_of(o->before_after, n), names, tokens, cols);
}

static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t offset, end, max_records, max_columns;
    int checksums;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nnpnn", &view, &offset, &end, &checksums, &max_records,
                          &max_columns))
        return NULL;
    if (end > view.len) end = view.len;
    if (offset < 0 || offset > end || max_columns < 0 || max_columns > 0x10000) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "bad offset, end or max_columns");
        return NULL;
    }
    const uint8_t *buf = view.buf;
    Out o;
    memset(&o, 0, sizeof(o));
    PyObject *names = PyList_New(0), *tokens = PyList_New(0), *result = NULL;
    const uint8_t *last_name = NULL;
    Py_ssize_t last_len = -1;
    int32_t last_id = -1;
    Py_ssize_t pos = offset;
    int reason = 0;
    if (names == NULL || tokens == NULL) goto done;
    while (1) {
        if (o.n >= max_records) {
            reason = 1;
            break;
        }
        Py_ssize_t avail = end - pos;
        if (avail < SECTION) break;
        const uint8_t *p = buf + pos;
        Py_ssize_t len = be16(p + 2);
        if (p[0] != 'G' || p[1] != 1 || len < MIN_RECORD) {
            reason = 2;
            break;
        }
        if (avail < len) break;
        const uint8_t *z = p + len - SECTION;
        if (z[0] != 'Z' || z[1] != 1 || be16(z + 2) != len) {
            reason = 2;
            break;
        }
        Parts parts;
        if (!plain(p, len, checksums, (unsigned)max_columns, &parts)) {
            reason = 2;
            break;
        }
        const uint8_t *h = p + 2 * SECTION;
        const uint8_t *name = h + ROW_HEADER;
        Py_ssize_t nlen = be16(h + 33);
        int32_t id = last_id;
        if (nlen != last_len || last_name == NULL || memcmp(name, last_name, (size_t)nlen) != 0) {
            PyObject *s = PyUnicode_DecodeUTF8((const char *)name, nlen, "strict");
            if (s == NULL) goto done;
            Py_ssize_t k = 0, count = PyList_GET_SIZE(names);
            for (; k < count; k++) {
                int eq = PyUnicode_Compare(PyList_GET_ITEM(names, k), s) == 0;
                if (eq) break;
            }
            if (k == count && PyList_Append(names, s) < 0) {
                Py_DECREF(s);
                goto done;
            }
            Py_DECREF(s);
            id = (int32_t)k;
            last_name = name;
            last_len = nlen;
            last_id = id;
        }
        if (out_reserve(&o, o.n + 1) || out_columns(&o, parts.max_index)) {
            PyErr_NoMemory();
            goto done;
        }
        Py_ssize_t i = o.n;
        o.rba[i] = pos;
        o.io_time[i] = be64s(h + 11);
        o.table_id[i] = id;
        o.io_type[i] = h[2];
        o.trans_ind[i] = h[3];
        o.before_after[i] = h[7];
        for (Py_ssize_t c = 0; c < o.ncols; c++) {
            Column *col = &o.cols[c];
            col->offsets[i + 1] = (int32_t)col->len;
            col->valid[i] = 0;
            col->present[i] = 0;
        }
        const uint8_t *c = parts.data_at, *cend = parts.data_at + parts.data_n;
        while (c < cend) {
            unsigned index = be16(c), null = be16(c + 4), vlen = be16(c + 6);
            Column *col = &o.cols[index];
            c += COLUMN_ENTRY;
            col->present[i] = 1;
            if (null == 0) {
                if (col_append(col, c, vlen)) {
                    PyErr_NoMemory();
                    goto done;
                }
                col->valid[i] = 1;
                col->offsets[i + 1] = (int32_t)col->len;
            }
            c += vlen;
        }
        if (parts.csn != NULL || parts.tranid != NULL) {
            PyObject *t = Py_BuildValue("(nNN)", i, text_or_none(parts.csn, parts.ncsn),
                                        text_or_none(parts.tranid, parts.ntranid));
            if (t == NULL || PyList_Append(tokens, t) < 0) {
                Py_XDECREF(t);
                goto done;
            }
            Py_DECREF(t);
        }
        o.n++;
        pos += len;
    }
    result = build(&o, pos, reason, names, tokens);
done:
    out_free(&o);
    Py_XDECREF(names);
    Py_XDECREF(tokens);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "Plain row-change records read into columns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "trailcols",
    .m_doc = "Trail records read into columns (the lakehouse Replicat's reader).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit_trailcols(void) {
    crc_init();
    return PyModule_Create(&module);
}
