/*
 * pgdecode: the PostgreSQL Extract's hot loop in C: test_decoding's text lines, as the slot
 * gives them, to the trail's record templates (engine/postgres/fastpath.py is its
 * pure-Python twin and reference; the tests hold the two equal).
 *
 * scan(rows, start, tables) reads rows[start:] ((lsn, data) pairs of
 * pg_logical_slot_peek_changes) and returns (events, next):
 *
 *   (0, lsn, xid)                        a BEGIN line
 *   (1, lsn, xid, time)                  a COMMIT line (time as the server printed it)
 *   (2, templates, count, ops, changes)  a run of consecutive changes of the tables in
 *                                        ``tables``: ``count`` record templates
 *                                        (codec.row_record with its defaults)
 *                                        concatenated, ops ((qualified, io type, rows),
 *                                        ...), ``changes`` the change lines it covers
 *                                        (those of tables whose spec is None add none)
 *   (3, lsn, data)                       a line left to the Python path; the scan stops
 *                                        after it (next is the row after it)
 *
 * ``tables`` maps a table's name as test_decoding prints it to None (a table the Extract
 * does not capture: its changes are passed over) or to its spec (fastpath.TableSpec):
 * (qualified, name bytes, column names, conversion codes (bytes, one per column), key
 * column indexes, full_old, identity_full, befores). A line is left to Python whenever
 * anything is not the common case: a table not in ``tables``, a TRUNCATE, a logical
 * message, a quoted table name, a column the spec does not name, columns out of order,
 * (no-tuple-data), a value a conversion must see that is not ASCII, anything malformed,
 * or a record that would pass a trail limit (the Python path then says which).
 *
 * The record layout is engine/trail/codec.row_record's (see trailkit.c, which writes the
 * same); the record shapes (key-changing updates, before images by GETUPDATEBEFORES and
 * UPDATERECORDFORMAT, REPLICA IDENTITY FULL old tuples) are engine/postgres/capture.py's.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define SECTION 4
#define ROW_HEADER 35
#define ENTRY 8
#define MAX_RECORD 0xFFFF
#define MAX_TABLE_NAME 512
#define MAX_COLUMN_INDEX 0xFFFF
#define MAX_VALUE (MAX_RECORD - (4 * SECTION + ROW_HEADER + ENTRY))
#define WHOLE 3

enum { EV_BEGIN, EV_COMMIT, EV_RUN, EV_SLOW };
/* fastpath.CONVERSION_CODES */
enum { CV_SKIP, CV_SAME, CV_BYTEA, CV_BOOL, CV_TS, CV_TSTZ, CV_MONEY, CV_BITS, CV_COUNT };
enum { IO_DELETE = 3, IO_INSERT = 5, IO_FIELDCOMP = 15, IO_KEYFIELDCOMP = 115, IO_UNIFIED = 134 };
#define BEFORE_IMAGE 0x100
enum { BEFORES_NONE, BEFORES_RECORD }; /* 2 (FULL) and 3 (COMPACT): a unified record */

#define MAX_TABLES 64
#define MAX_OPS 16
#define RUN_LIMIT (8 << 20)

typedef struct {
    uint8_t *b;
    Py_ssize_t n, cap;
} Buf;

static int reserve(Buf *b, Py_ssize_t more) {
    if (b->n + more <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + more) cap *= 2;
    uint8_t *p = PyMem_Realloc(b->b, (size_t)cap);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    b->b = p;
    b->cap = cap;
    return 0;
}

typedef struct {
    Py_ssize_t idx;
    int null;
    Py_ssize_t off, len; /* the value's bytes in the arena */
} Ent;

typedef struct {
    Ent *e;
    Py_ssize_t n, cap;
} Image;

static int push(Image *im, Ent e) {
    if (im->n == im->cap) {
        Py_ssize_t cap = im->cap ? im->cap * 2 : 32;
        Ent *p = PyMem_Realloc(im->e, (size_t)cap * sizeof(Ent));
        if (!p) {
            PyErr_NoMemory();
            return -1;
        }
        im->e = p;
        im->cap = cap;
    }
    im->e[im->n++] = e;
    return 0;
}

static const Ent *find(const Image *im, Py_ssize_t idx) {
    for (Py_ssize_t k = 0; k < im->n; k++)
        if (im->e[k].idx == idx) return &im->e[k];
    return NULL;
}

typedef struct {
    char *printed;
    Py_ssize_t nprinted;
    PyObject *spec; /* a reference; None: not captured */
    PyObject *qualified;
    const char *name;
    Py_ssize_t nname, ncols, nkeys;
    const char **cname;
    Py_ssize_t *ncname;
    const uint8_t *conv;
    Py_ssize_t *keys;
    int full_old, ident_full, befores;
} Table;

static void table_free(Table *t) {
    PyMem_Free(t->printed);
    PyMem_Free(t->cname);
    PyMem_Free(t->ncname);
    PyMem_Free(t->keys);
    Py_XDECREF(t->spec);
    memset(t, 0, sizeof(Table));
}

/* The spec (or None) into t; -1 with TypeError when it is not a spec. */
static int table_of(Table *t, PyObject *spec) {
    t->spec = Py_NewRef(spec);
    if (spec == Py_None) return 0;
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 8) goto bad;
    PyObject *q = PyTuple_GET_ITEM(spec, 0), *name = PyTuple_GET_ITEM(spec, 1),
             *cols = PyTuple_GET_ITEM(spec, 2), *conv = PyTuple_GET_ITEM(spec, 3),
             *keys = PyTuple_GET_ITEM(spec, 4);
    if (!PyUnicode_Check(q) || !PyBytes_Check(name) || !PyTuple_Check(cols) ||
        !PyBytes_Check(conv) || !PyTuple_Check(keys) ||
        PyBytes_GET_SIZE(conv) != PyTuple_GET_SIZE(cols))
        goto bad;
    t->qualified = q;
    t->name = PyBytes_AS_STRING(name);
    t->nname = PyBytes_GET_SIZE(name);
    t->ncols = PyTuple_GET_SIZE(cols);
    t->conv = (const uint8_t *)PyBytes_AS_STRING(conv);
    t->cname = PyMem_Calloc((size_t)t->ncols + 1, sizeof(char *));
    t->ncname = PyMem_Calloc((size_t)t->ncols + 1, sizeof(Py_ssize_t));
    t->nkeys = PyTuple_GET_SIZE(keys);
    t->keys = PyMem_Calloc((size_t)t->nkeys + 1, sizeof(Py_ssize_t));
    if (!t->cname || !t->ncname || !t->keys) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t c = 0; c < t->ncols; c++) {
        PyObject *s = PyTuple_GET_ITEM(cols, c);
        if (!PyUnicode_Check(s) || t->conv[c] >= CV_COUNT) goto bad;
        t->cname[c] = PyUnicode_AsUTF8AndSize(s, &t->ncname[c]);
        if (!t->cname[c]) return -1;
    }
    for (Py_ssize_t k = 0; k < t->nkeys; k++) {
        t->keys[k] = PyLong_AsSsize_t(PyTuple_GET_ITEM(keys, k));
        if (t->keys[k] == -1 && PyErr_Occurred()) return -1;
    }
    t->full_old = PyObject_IsTrue(PyTuple_GET_ITEM(spec, 5));
    t->ident_full = PyObject_IsTrue(PyTuple_GET_ITEM(spec, 6));
    t->befores = (int)PyLong_AsLong(PyTuple_GET_ITEM(spec, 7));
    if (t->full_old < 0 || t->ident_full < 0 || PyErr_Occurred()) return -1;
    return 0;
bad:
    PyErr_SetString(PyExc_TypeError, "a table spec is fastpath.TableSpec or None");
    return -1;
}

typedef struct {
    PyObject *events;
    Table tables[MAX_TABLES];
    int ntables;
    Buf run, arena, tmp, names;
    Image new_, old_, a, b;
    Py_ssize_t count, changes;
    int op_t[MAX_OPS];
    unsigned op_io[MAX_OPS];
    Py_ssize_t op_n[MAX_OPS];
    int nops;
} Scan;

/* The table printed as s[0..n) from ``tables``: its index, -2 when absent, -1 on error. */
static int lookup(Scan *S, PyObject *tables, const char *s, Py_ssize_t n) {
    for (int k = 0; k < S->ntables; k++)
        if (S->tables[k].nprinted == n && memcmp(S->tables[k].printed, s, (size_t)n) == 0)
            return k;
    PyObject *key = PyUnicode_DecodeUTF8(s, n, NULL);
    if (!key) return -1;
    PyObject *spec = PyDict_GetItemWithError(tables, key);
    Py_DECREF(key);
    if (!spec) return PyErr_Occurred() ? -1 : -2;
    if (S->ntables == MAX_TABLES) {
        /* (the run's ops name tables by index: they are emitted before any is dropped) */
        return -3;
    }
    Table *t = &S->tables[S->ntables];
    memset(t, 0, sizeof(Table));
    if (table_of(t, spec) < 0) {
        table_free(t);
        return -1;
    }
    t->printed = PyMem_Malloc((size_t)n + 1);
    if (!t->printed) {
        table_free(t);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(t->printed, s, (size_t)n);
    t->nprinted = n;
    return S->ntables++;
}

/* ---- one change line --------------------------------------------------------------- */
#define DECLINE 0
#define OK 1
#define FAIL (-1)

static int is_ws(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

static int ascii(const uint8_t *s, Py_ssize_t n) {
    for (Py_ssize_t k = 0; k < n; k++)
        if (s[k] >= 0x80) return 0;
    return 1;
}

/* The value v[0..n) converted by ``conv`` appended to the arena (as types.py converts). */
static int convert(Buf *A, int conv, const uint8_t *v, Py_ssize_t n, Py_ssize_t *len) {
    static const char hex[] = "0123456789ABCDEF";
    Py_ssize_t at = A->n;
    if (conv != CV_SAME && conv != CV_BYTEA && !ascii(v, n)) return DECLINE;
    if (reserve(A, 2 * n + 16) < 0) return FAIL;
    uint8_t *o = A->b + at;
    Py_ssize_t m = 0;
    switch (conv) {
    case CV_SAME:
        memcpy(o, v, (size_t)n);
        m = n;
        break;
    case CV_BYTEA:
        if (n >= 2 && v[0] == '\\' && v[1] == 'x') {
            if (!ascii(v, n)) return DECLINE;
            for (Py_ssize_t k = 2; k < n; k++)
                o[m++] = (uint8_t)(v[k] >= 'a' && v[k] <= 'z' ? v[k] - 32 : v[k]);
        } else {
            for (Py_ssize_t k = 0; k < n; k++) {
                o[m++] = (uint8_t)hex[v[k] >> 4];
                o[m++] = (uint8_t)hex[v[k] & 15];
            }
        }
        break;
    case CV_BOOL:
        o[m++] = (n == 4 && memcmp(v, "true", 4) == 0) || (n == 1 && v[0] == 't') ? '1' : '0';
        break;
    case CV_TS:
    case CV_TSTZ: {
        if (conv == CV_TSTZ && n >= 3 && memcmp(v + n - 3, "+00", 3) == 0) n -= 3;
        if (n < 19 || v[10] != ' ') {
            memcpy(o, v, (size_t)n);
            m = n;
            break;
        }
        const uint8_t *clock = v + 11;
        Py_ssize_t nc = n - 11, nf = 0;
        const uint8_t *frac = NULL;
        if (nc > 8 && clock[8] == '.') {
            frac = clock + 9;
            nf = nc - 9;
        }
        memcpy(o, v, 10);
        o[10] = ':';
        memcpy(o + 11, clock, 8);
        o[19] = '.';
        m = 20;
        for (int k = 0; k < 9; k++) o[m++] = k < nf ? frac[k] : '0';
        break;
    }
    case CV_MONEY: {
        int negative = n > 0 && v[0] == '-';
        Py_ssize_t start = m;
        if (negative) o[m++] = '-';
        Py_ssize_t digits = 0;
        for (Py_ssize_t k = 0; k < n; k++)
            if ((v[k] >= '0' && v[k] <= '9') || v[k] == '.') {
                o[m++] = v[k];
                digits++;
            }
        if (!digits) m = start;
        break;
    }
    case CV_BITS:
        if (n >= 2 && v[0] == 'B' && v[1] == '\'' && v[n - 1] == '\'') {
            if (n > 2) {
                memcpy(o, v + 2, (size_t)(n - 3));
                m = n - 3;
            }
        } else {
            memcpy(o, v, (size_t)n);
            m = n;
        }
        break;
    default:
        return DECLINE;
    }
    A->n = at + m;
    *len = m;
    return OK;
}

/* The closing quote of the quoted text at s[i] (the quote doubled inside: *doubled set);
 * -1 when there is none. */
static Py_ssize_t closing(const uint8_t *s, Py_ssize_t i, Py_ssize_t n, uint8_t q, int *doubled) {
    Py_ssize_t j = i + 1;
    while (1) {
        while (j < n && s[j] != q) j++;
        if (j >= n) return -1;
        if (j + 1 < n && s[j + 1] == q) {
            *doubled = 1;
            j += 2;
            continue;
        }
        return j;
    }
}

/* v[0..*n) with each doubled quote q once, into b (*n updated); -1 on no memory. */
static int undouble(Buf *b, const uint8_t *v, Py_ssize_t *n, uint8_t q) {
    b->n = 0;
    if (reserve(b, *n) < 0) return -1;
    Py_ssize_t m = 0;
    for (Py_ssize_t k = 0; k < *n; k++) {
        b->b[m++] = v[k];
        if (v[k] == q) k++;
    }
    *n = m;
    return 0;
}

/* The columns of a line from s[i] to n into new_ / old_ (DELETE starts with the old). */
static int columns(Scan *S, const Table *t, const uint8_t *s, Py_ssize_t i, Py_ssize_t n,
                   int is_delete) {
    Image *target = is_delete ? &S->old_ : &S->new_;
    Py_ssize_t hint = 0;
    while (1) {
        while (i < n && s[i] == ' ') i++;
        if (i >= n) break;
        if (n - i >= 8 && memcmp(s + i, "old-key:", 8) == 0) {
            target = &S->old_;
            i += 8;
            continue;
        }
        if (n - i >= 10 && memcmp(s + i, "new-tuple:", 10) == 0) {
            target = &S->new_;
            i += 10;
            continue;
        }
        /* the name: quoted ("" doubled) or bare (up to whitespace or '[') */
        const uint8_t *name;
        Py_ssize_t nname;
        int quoted_name = s[i] == '"', doubled_name = 0;
        if (quoted_name) {
            Py_ssize_t j = closing(s, i, n, '"', &doubled_name);
            if (j < 0) return DECLINE;
            name = s + i + 1;
            nname = j - i - 1;
            i = j + 1;
        } else {
            Py_ssize_t j = i;
            while (j < n && !is_ws(s[j]) && s[j] != '[') j++;
            if (j == i) return DECLINE;
            name = s + i;
            nname = j - i;
            i = j;
        }
        if (i >= n || s[i] != '[') return DECLINE;
        /* the type, up to "]:" */
        Py_ssize_t j = i + 1;
        while (j + 1 < n && !(s[j] == ']' && s[j + 1] == ':')) j++;
        if (j + 1 >= n) return DECLINE;
        i = j + 2;
        /* the value */
        const uint8_t *v;
        Py_ssize_t nv;
        int null = 0, toast = 0, doubled = 0;
        if (i < n && s[i] == '\'') {
            Py_ssize_t k = closing(s, i, n, '\'', &doubled);
            if (k < 0) return DECLINE;
            v = s + i + 1;
            nv = k - i - 1;
            i = k + 1;
            if (i < n && s[i] != ' ') return DECLINE;
        } else {
            Py_ssize_t k = i;
            while (k < n && !is_ws(s[k])) k++;
            v = s + i;
            nv = k - i;
            i = k;
            if (i < n && s[i] != ' ') return DECLINE;
            if (nv == 4 && memcmp(v, "null", 4) == 0) null = 1;
            else if (nv == 21 && memcmp(v, "unchanged-toast-datum", 21) == 0) toast = 1;
        }
        /* the column: where the last one was plus one, usually */
        Py_ssize_t c = -1;
        if (doubled_name) { /* a quoted name with "" inside: compared undoubled */
            if (undouble(&S->names, name, &nname, '"') < 0) return FAIL;
            name = S->names.b;
        }
        for (Py_ssize_t k = 0; k < t->ncols; k++) {
            Py_ssize_t cand = (hint + k) % t->ncols;
            if (t->ncname[cand] == nname && memcmp(t->cname[cand], name, (size_t)nname) == 0) {
                c = cand;
                break;
            }
        }
        if (c < 0) return DECLINE; /* a column the catalog did not have */
        hint = c + 1;
        if (target->n && target->e[target->n - 1].idx >= c) return DECLINE;
        if (t->conv[c] == CV_SKIP || toast) continue; /* unsupported, or TOAST left alone */
        Ent e = {c, null, 0, 0};
        if (!null) {
            if (doubled) { /* '' undoubled first */
                if (undouble(&S->tmp, v, &nv, '\'') < 0) return FAIL;
                v = S->tmp.b;
            }
            e.off = S->arena.n;
            int rc = convert(&S->arena, t->conv[c], v, nv, &e.len);
            if (rc != OK) return rc;
            if (e.len > MAX_VALUE) return DECLINE;
        }
        if (push(target, e) < 0) return FAIL;
    }
    return OK;
}

static int same_value(const Buf *A, const Ent *x, const Ent *y) {
    if (x->null || y->null) return x->null == y->null;
    return x->len == y->len && memcmp(A->b + x->off, A->b + y->off, (size_t)x->len) == 0;
}

/* capture._full_old: every supported column, NULL where the old tuple leaves it out. */
static int full_old(const Table *t, const Image *old, Image *out) {
    out->n = 0;
    for (Py_ssize_t c = 0; c < t->ncols; c++) {
        if (t->conv[c] == CV_SKIP) continue;
        const Ent *e = find(old, c);
        Ent x = {c, 1, 0, 0};
        if (push(out, e ? *e : x) < 0) return -1;
    }
    return 0;
}

static int is_key(const Table *t, Py_ssize_t c) {
    for (Py_ssize_t k = 0; k < t->nkeys; k++)
        if (t->keys[k] == c) return 1;
    return 0;
}

static Py_ssize_t area(const Image *im) {
    Py_ssize_t n = 0;
    for (Py_ssize_t k = 0; k < im->n; k++) n += ENTRY + (im->e[k].null ? 0 : im->e[k].len);
    return n;
}

static uint8_t *be16(uint8_t *p, unsigned v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
    return p + 2;
}

static uint8_t *section(uint8_t *p, char tag, unsigned flag, unsigned len) {
    p[0] = (uint8_t)tag;
    p[1] = (uint8_t)flag;
    return be16(p + 2, len);
}

static uint8_t *entries(uint8_t *p, const Buf *A, const Image *im) {
    for (Py_ssize_t k = 0; k < im->n; k++) {
        const Ent *e = &im->e[k];
        p = be16(p, (unsigned)e->idx);
        if (e->null) {
            p = be16(p, 4);
            p = be16(p, 0xFFFF);
            p = be16(p, 0);
        } else {
            p = be16(p, (unsigned)(4 + e->len));
            p = be16(p, 0);
            p = be16(p, (unsigned)e->len);
            memcpy(p, A->b + e->off, (size_t)e->len);
            p += e->len;
        }
    }
    return p;
}

/* codec.row_record(io, name, data, before, None, lsn >> 32, lsn & 0xFFFFFFFF) appended to
 * the run; DECLINE when it would pass a limit. */
static int record(Scan *S, const Table *t, unsigned io, const Image *data, const Image *before,
                  uint64_t lsn) {
    for (Py_ssize_t k = 0; k < data->n; k++)
        if (data->e[k].idx > MAX_COLUMN_INDEX) return DECLINE;
    for (Py_ssize_t k = 0; before && k < before->n; k++)
        if (before->e[k].idx > MAX_COLUMN_INDEX) return DECLINE;
    Py_ssize_t nd = area(data), nb = before ? area(before) : 0;
    Py_ssize_t len = 4 * SECTION + ROW_HEADER + t->nname + nd + (nb ? SECTION + nb : 0);
    if (t->nname > MAX_TABLE_NAME || len > MAX_RECORD) return DECLINE;
    if (reserve(&S->run, len) < 0) return FAIL;
    uint8_t *p = S->run.b + S->run.n;
    unsigned wire = io & BEFORE_IMAGE ? io & 0xFF : io;
    char ba = (io & BEFORE_IMAGE) || io == IO_DELETE ? 'B' : 'A';
    p = section(p, 'G', 1, (unsigned)len);
    p = section(p, 'H', 0, (unsigned)(ROW_HEADER + t->nname));
    uint8_t *h = p;
    memset(h, 0, ROW_HEADER);
    h[0] = 'E';
    h[2] = (uint8_t)wire;
    h[3] = WHOLE;
    h[5] = 'N';
    h[6] = 4;
    h[7] = (uint8_t)ba;
    h[9] = 'R';
    /* h[11..19): IO time 0 */
    uint32_t seq = (uint32_t)(lsn >> 32), off = (uint32_t)lsn;
    be16(be16(h + 19, seq >> 16), seq & 0xFFFF);
    be16(be16(h + 27, off >> 16), off & 0xFFFF); /* h[23..27): the high half, 0 */
    be16(h + 31, 1);
    be16(h + 33, (unsigned)t->nname);
    p = h + ROW_HEADER;
    memcpy(p, t->name, (size_t)t->nname);
    p += t->nname;
    if (nb) {
        p = section(p, 'B', 0, (unsigned)nb);
        p = entries(p, &S->arena, before);
    }
    p = section(p, 'D', 0, (unsigned)nd);
    p = entries(p, &S->arena, data);
    p = section(p, 'Z', 1, (unsigned)len);
    S->run.n += len;
    return OK;
}

/* capture._key_of's image into S->a. */
static int key_of(Scan *S, const Table *t) {
    if (t->full_old) return full_old(t, &S->old_, &S->a) < 0 ? FAIL : OK;
    S->a.n = 0;
    for (Py_ssize_t k = 0; k < S->old_.n; k++)
        if (is_key(t, S->old_.e[k].idx) && push(&S->a, S->old_.e[k]) < 0) return FAIL;
    if (S->a.n == 0)
        for (Py_ssize_t k = 0; k < S->old_.n; k++)
            if (push(&S->a, S->old_.e[k]) < 0) return FAIL;
    return OK;
}

/* One change line's records into the run (op: 'I', 'U', 'D'); the records' io types in
 * ios[0..*nios). */
static int change(Scan *S, const Table *t, int op, uint64_t lsn, unsigned ios[2], int *nios) {
    int rc;
    *nios = 0;
    if (op == 'I') {
        ios[(*nios)++] = IO_INSERT;
        return record(S, t, IO_INSERT, &S->new_, NULL, lsn);
    }
    if (op == 'D') {
        if ((rc = key_of(S, t)) != OK) return rc;
        ios[(*nios)++] = IO_DELETE;
        return record(S, t, IO_DELETE, &S->a, NULL, lsn);
    }
    /* an update: capture._update */
    const Image *old = &S->old_, *after = &S->new_;
    const Image *before_full = old;
    if (old->n && t->ident_full) {
        if (full_old(t, old, &S->a) < 0) return FAIL;
        before_full = &S->a;
    }
    int key_changed = 0;
    for (Py_ssize_t k = 0; old->n && k < t->nkeys && !key_changed; k++) {
        const Ent *x = find(before_full, t->keys[k]), *y = find(after, t->keys[k]);
        if (x && y && !same_value(&S->arena, x, y)) key_changed = 1;
    }
    if (key_changed) {
        const Image *bimg = before_full;
        if (t->befores == BEFORES_NONE) {
            S->b.n = 0;
            for (Py_ssize_t k = 0; k < t->nkeys; k++) {
                const Ent *x = find(before_full, t->keys[k]);
                if (x && push(&S->b, *x) < 0) return FAIL;
            }
            bimg = &S->b;
        }
        ios[(*nios)++] = IO_KEYFIELDCOMP;
        return record(S, t, IO_KEYFIELDCOMP, after, bimg, lsn);
    }
    if (t->befores == BEFORES_NONE) {
        ios[(*nios)++] = IO_FIELDCOMP;
        return record(S, t, IO_FIELDCOMP, after, NULL, lsn);
    }
    const Image *bcols = before_full;
    if (!before_full->n) {
        S->b.n = 0;
        for (Py_ssize_t k = 0; k < t->nkeys; k++) {
            const Ent *y = find(after, t->keys[k]);
            if (y && push(&S->b, *y) < 0) return FAIL;
        }
        bcols = &S->b;
    }
    if (t->befores == BEFORES_RECORD) {
        ios[(*nios)++] = IO_FIELDCOMP | BEFORE_IMAGE;
        if ((rc = record(S, t, IO_FIELDCOMP | BEFORE_IMAGE, bcols, NULL, lsn)) != OK) return rc;
        ios[(*nios)++] = IO_FIELDCOMP;
        return record(S, t, IO_FIELDCOMP, after, NULL, lsn);
    }
    ios[(*nios)++] = IO_UNIFIED;
    return record(S, t, IO_UNIFIED, after, bcols, lsn);
}

/* ---- events -------------------------------------------------------------------------- */
static int emit_run(Scan *S) {
    if (!S->changes && !S->count) return 0;
    PyObject *ops = PyTuple_New(S->nops);
    if (!ops) return -1;
    for (int k = 0; k < S->nops; k++) {
        PyObject *op = Py_BuildValue("(OIn)", S->tables[S->op_t[k]].qualified, S->op_io[k],
                                     S->op_n[k]);
        if (!op) {
            Py_DECREF(ops);
            return -1;
        }
        PyTuple_SET_ITEM(ops, k, op);
    }
    PyObject *ev = Py_BuildValue("(iy#nNn)", EV_RUN, S->run.b ? (const char *)S->run.b : "",
                                 S->run.n, S->count, ops, S->changes);
    if (!ev) return -1;
    int rc = PyList_Append(S->events, ev);
    Py_DECREF(ev);
    S->run.n = S->count = S->changes = 0;
    S->nops = 0;
    return rc;
}

static int note_op(Scan *S, int t, unsigned io) {
    for (int k = 0; k < S->nops; k++)
        if (S->op_t[k] == t && S->op_io[k] == io) {
            S->op_n[k]++;
            return 0;
        }
    S->op_t[S->nops] = t;
    S->op_io[S->nops] = io;
    S->op_n[S->nops++] = 1;
    return 0;
}

static int digits(const uint8_t *s, Py_ssize_t n) {
    if (n <= 0) return 0;
    for (Py_ssize_t k = 0; k < n; k++)
        if (s[k] < '0' || s[k] > '9') return 0;
    return 1;
}

static int time_chars(const uint8_t *s, Py_ssize_t n) {
    if (n <= 0) return 0;
    for (Py_ssize_t k = 0; k < n; k++)
        if (!((s[k] >= '0' && s[k] <= '9') || s[k] == ' ' || s[k] == ':' || s[k] == '.' ||
              s[k] == '+' || s[k] == '-'))
            return 0;
    return 1;
}

/* One line: OK (handled), DECLINE (left to Python) or FAIL. */
static int line(Scan *S, PyObject *tables, long long lsn, const uint8_t *s, Py_ssize_t n) {
    if (n > 6 && memcmp(s, "BEGIN ", 6) == 0) {
        if (!digits(s + 6, n - 6)) return DECLINE;
        if (emit_run(S) < 0) return FAIL;
        PyObject *ev = Py_BuildValue("(iLs#)", EV_BEGIN, lsn, s + 6, n - 6);
        if (!ev) return FAIL;
        int rc = PyList_Append(S->events, ev);
        Py_DECREF(ev);
        return rc < 0 ? FAIL : OK;
    }
    if (n > 7 && memcmp(s, "COMMIT ", 7) == 0) {
        Py_ssize_t k = 7;
        while (k < n && s[k] >= '0' && s[k] <= '9') k++;
        if (k == 7 || n - k < 7 || memcmp(s + k, " (at ", 5) != 0 || s[n - 1] != ')' ||
            !time_chars(s + k + 5, n - k - 6))
            return DECLINE;
        if (emit_run(S) < 0) return FAIL;
        PyObject *ev = Py_BuildValue("(iLs#s#)", EV_COMMIT, lsn, s + 7, k - 7, s + k + 5,
                                     n - k - 6);
        if (!ev) return FAIL;
        int rc = PyList_Append(S->events, ev);
        Py_DECREF(ev);
        return rc < 0 ? FAIL : OK;
    }
    if (n < 6 || memcmp(s, "table ", 6) != 0) return DECLINE;
    const uint8_t *colon = NULL;
    for (Py_ssize_t k = 6; k + 1 < n; k++)
        if (s[k] == ':' && s[k + 1] == ' ') {
            colon = s + k;
            break;
        }
    if (!colon || colon == s + 6) return DECLINE;
    Py_ssize_t nhead = colon - (s + 6);
    for (Py_ssize_t k = 0; k < nhead; k++) {
        uint8_t c = s[6 + k];
        if (c == '"' || c == '[' || (c == ',' && k + 1 < nhead && s[7 + k] == ' '))
            return DECLINE;
    }
    Py_ssize_t i = 6 + nhead + 2;
    int op;
    if (n - i >= 7 && memcmp(s + i, "INSERT:", 7) == 0) op = 'I';
    else if (n - i >= 7 && memcmp(s + i, "UPDATE:", 7) == 0) op = 'U';
    else if (n - i >= 7 && memcmp(s + i, "DELETE:", 7) == 0) op = 'D';
    else return DECLINE;
    i += 7;
    int ti = lookup(S, tables, (const char *)s + 6, nhead);
    if (ti == -1) return FAIL;
    if (ti < 0) return DECLINE; /* not in tables (or too many tables in one call) */
    const Table *t = &S->tables[ti];
    if (t->spec == Py_None) {
        S->changes++;
        return OK;
    }
    S->arena.n = 0;
    S->new_.n = S->old_.n = 0;
    int rc = columns(S, t, s, i, n, op == 'D');
    if (rc != OK) return rc;
    Py_ssize_t mark = S->run.n;
    unsigned ios[2];
    int nios = 0;
    rc = change(S, t, op, (uint64_t)lsn, ios, &nios);
    if (rc != OK) {
        S->run.n = mark;
        return rc;
    }
    if (S->nops + nios > MAX_OPS) { /* a new run for what does not fit */
        Buf keep = S->run;
        Py_ssize_t len = S->run.n - mark;
        uint8_t *tmp = PyMem_Malloc((size_t)len + 1);
        if (!tmp) {
            PyErr_NoMemory();
            return FAIL;
        }
        memcpy(tmp, keep.b + mark, (size_t)len);
        S->run.n = mark;
        if (emit_run(S) < 0) {
            PyMem_Free(tmp);
            return FAIL;
        }
        memcpy(S->run.b, tmp, (size_t)len);
        S->run.n = len;
        PyMem_Free(tmp);
    }
    for (int k = 0; k < nios; k++) note_op(S, ti, ios[k]);
    S->count += nios;
    S->changes++;
    return OK;
}

static PyObject *scan(PyObject *mod, PyObject *args) {
    PyObject *rows, *tables;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "O!nO!", &PyList_Type, &rows, &start, &PyDict_Type, &tables))
        return NULL;
    Scan S;
    memset(&S, 0, sizeof(S));
    PyObject *result = NULL;
    S.events = PyList_New(0);
    if (!S.events) return NULL;
    Py_ssize_t nrows = PyList_GET_SIZE(rows), i = start < 0 ? 0 : start;
    for (; i < nrows; i++) {
        PyObject *row = PyList_GET_ITEM(rows, i);
        if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) != 2 ||
            !PyUnicode_Check(PyTuple_GET_ITEM(row, 1))) {
            PyErr_SetString(PyExc_TypeError, "a row is (lsn, data)");
            goto done;
        }
        long long lsn = PyLong_AsLongLong(PyTuple_GET_ITEM(row, 0));
        if (lsn == -1 && PyErr_Occurred()) goto done;
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(row, 1), &n);
        int rc = FAIL;
        if (!s) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) goto done;
            PyErr_Clear(); /* (lone surrogates: the Python path) */
            rc = DECLINE;
        } else {
            rc = line(&S, tables, lsn, (const uint8_t *)s, n);
        }
        if (rc == FAIL) goto done;
        if (rc == DECLINE) {
            if (emit_run(&S) < 0) goto done;
            PyObject *ev = Py_BuildValue("(iLO)", EV_SLOW, lsn, PyTuple_GET_ITEM(row, 1));
            if (!ev || PyList_Append(S.events, ev) < 0) {
                Py_XDECREF(ev);
                goto done;
            }
            Py_DECREF(ev);
            i++;
            break;
        }
        if (S.run.n > RUN_LIMIT && emit_run(&S) < 0) goto done;
    }
    if (emit_run(&S) < 0) goto done;
    result = Py_BuildValue("(On)", S.events, i);
done:
    Py_DECREF(S.events);
    for (int k = 0; k < S.ntables; k++) table_free(&S.tables[k]);
    PyMem_Free(S.run.b);
    PyMem_Free(S.arena.b);
    PyMem_Free(S.tmp.b);
    PyMem_Free(S.names.b);
    PyMem_Free(S.new_.e);
    PyMem_Free(S.old_.e);
    PyMem_Free(S.a.e);
    PyMem_Free(S.b.e);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS,
     "scan(rows, start, tables) -> (events, next): test_decoding lines to record templates."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "pgdecode",
    .m_doc = "The PostgreSQL Extract's text-to-record loop in C.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit_pgdecode(void) { return PyModule_Create(&module); }
