/*
 * redomine: the Extract miner's record walk in C (engine/extract/tasks/miner.py is its reference).
 *
 * Walker.walk(buf, base, pos, end, eof, out) walks the redo frames of a loaded window of
 * one log (engine/embedded/redo_scan.py: `buf` holds logical positions [base, base +
 * len(buf))) from logical position `pos`, verifies each frame's checksum and decodes its
 * record exactly as miner.Miner.record does, appending the same event tuples to `out`.
 * It stops, returning (pos, frames, last stop), at the first frame it leaves to Python:
 * one that needs more of the file than `buf` holds, a torn or corrupt frame, or a record
 * with anything but the common change vectors (direct load, DDL, opaque, an unknown tag,
 * a malformed body, a hooked table, a value the Python converters must see, a record too
 * large, an update without its key columns). The Python path then handles that one frame and calls walk again: what leaves
 * here is byte for byte what miner.py would have produced, which the tests check.
 *
 * Column values: NUMBER (canonical, exponent within +-10, at most 20 digit bytes) and the
 * character types are converted here; every other value goes through the column's Python
 * entry converter (engine/extract/tasks/values.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "crc32.h"
#include <stdint.h>
#include <string.h>

/* ---- layout (engine/extract/tasks/miner.py, docs/redo_format.md) --------------------------- */
#define BLOCK 512
#define BLOCK_HEAD 16
#define PAYLOAD (BLOCK - BLOCK_HEAD)
#define FRAME 8
#define BLOCK_MAGIC 0x4752
#define MAX_RECORD (256u * 1024u * 1024u)
#define REC_SIZE 38
#define LWN_SIZE 12
#define CV_SIZE 27
#define AT_TAG 26
#define IDX_SIZE 16
#define SESSION_SIZE 20
#define NUL32 0xFFFFFFFFu
#define ROLLBACK_FLAG 0x04
#define UNDO_CLASS_BASE 15
#define ROOM (65535 - 200)
#define MAX_VALUE_LENGTH (0xFFFF - (4 * 4 + 35 + 8))

enum { T_KDO = 1, T_INDEX, T_SLOT, T_UNDO, T_COMMIT, T_APPLIED, T_SESSION, T_CLEANOUT };
enum { K_NUMBER = 0, K_TEXT = 1, K_PYTHON = 2 };

/* Results of the body readers: a position, or one of these. */
#define DECLINE (-1) /* leave the record to Python */
#define FAIL (-2)    /* a Python exception is set */

typedef Py_ssize_t pos_t;

/* ---- little-endian reads (the caller checks bounds) ------------------------------------ */
static inline uint16_t u16(const uint8_t *b, pos_t p) { return (uint16_t)(b[p] | b[p + 1] << 8); }
static inline uint32_t u32(const uint8_t *b, pos_t p) {
    return (uint32_t)b[p] | (uint32_t)b[p + 1] << 8 | (uint32_t)b[p + 2] << 16 |
           (uint32_t)b[p + 3] << 24;
}
static inline uint64_t u64(const uint8_t *b, pos_t p) {
    return (uint64_t)u32(b, p) | (uint64_t)u32(b, p + 4) << 32;
}

/* One record's bytes: reads must stay inside [0, hi). */
typedef struct {
    const uint8_t *b;
    pos_t hi;
} Rec;

#define NEED(r, p, k)                                      \
    do {                                                   \
        if ((p) < 0 || (pos_t)(p) + (pos_t)(k) > (r)->hi) \
            return DECLINE;                                \
    } while (0)

/* The same inside a function that must release what it holds: rc stays DECLINE. */
#define CHECK(r, p, k)                                     \
    do {                                                   \
        if ((p) < 0 || (pos_t)(p) + (pos_t)(k) > (r)->hi) \
            goto done;                                     \
    } while (0)

/* ---- skips: the same steps as miner.py's _skip_* --------------------------------------- */
static pos_t skip_raw(const Rec *r, pos_t p) {
    NEED(r, p, 4);
    uint32_t n = u32(r->b, p);
    return n == NUL32 ? p + 4 : p + 4 + (pos_t)n;
}

static pos_t skip_cols(const Rec *r, pos_t p) {
    NEED(r, p, 2);
    unsigned n = u16(r->b, p);
    p += 2;
    for (unsigned i = 0; i < n; i++) {
        NEED(r, p, 6);
        int32_t ln = (int32_t)u32(r->b, p + 2);
        p += 6 + (ln > 0 ? ln : 0);
    }
    return p;
}

static pos_t skip_rows(const Rec *r, pos_t p) {
    NEED(r, p, 2);
    unsigned n = u16(r->b, p);
    p += 2;
    for (unsigned i = 0; i < n; i++) {
        p = skip_raw(r, p + 5);
        if (p < 0) return p;
        p = skip_cols(r, p);
        if (p < 0) return p;
    }
    return p;
}

static pos_t skip_ints(const Rec *r, pos_t p) {
    NEED(r, p, 2);
    return p + 2 + 4 * (pos_t)u16(r->b, p);
}

static pos_t skip_ktb(const Rec *r, pos_t p) {
    NEED(r, p, 41);
    unsigned ncl = u16(r->b, p + 19);
    uint32_t n = u32(r->b, p + 37);
    return p + (n == NUL32 ? 41 : 41 + (pos_t)n) + 12 * (pos_t)ncl;
}

static pos_t skip_names(const Rec *r, pos_t p) {
    NEED(r, p, 25);
    uint32_t n = u32(r->b, p + 21);
    p += n == NUL32 ? 25 : 25 + (pos_t)n;
    return skip_raw(r, p);
}

static pos_t skip_kdo_rest(const Rec *r, pos_t p) {
    p = skip_cols(r, p);
    if (p < 0) return p;
    NEED(r, p, 2);
    if (u16(r->b, p)) {
        p = skip_rows(r, p);
        if (p < 0) return p;
    } else {
        p += 2;
    }
    return skip_ints(r, p);
}

static pos_t skip_index(const Rec *r, pos_t p) {
    NEED(r, p, IDX_SIZE + 4);
    uint32_t n = u32(r->b, p + IDX_SIZE);
    p += IDX_SIZE + (n == NUL32 ? 4 : 4 + (pos_t)n);
    p = skip_ktb(r, p);
    if (p < 0) return p;
    p = skip_raw(r, p); /* keys */
    if (p < 0) return p;
    p = skip_ints(r, p); /* key sizes */
    if (p < 0) return p;
    p = skip_ints(r, p); /* slots */
    if (p < 0) return p;
    return skip_raw(r, p); /* key data */
}


/* ---- row images ------------------------------------------------------------------------ */
/* A column of an image: absent, NULL, or bytes. Only columns < the table's count matter
 * to what is emitted (miner._Columns drops the others), so an image is an array of them. */
typedef struct {
    const uint8_t *v;
    int32_t len; /* -1: NULL */
    uint8_t present;
} Val;

/* Add a column list's entries to img (no clearing: dict.update). */
static pos_t update_cols(const Rec *r, pos_t p, Val *img, Py_ssize_t ncols) {
    NEED(r, p, 2);
    unsigned n = u16(r->b, p);
    p += 2;
    for (unsigned i = 0; i < n; i++) {
        NEED(r, p, 6);
        unsigned no = u16(r->b, p);
        int32_t ln = (int32_t)u32(r->b, p + 2);
        p += 6;
        if (ln >= 0) NEED(r, p, ln);
        if (no < ncols) {
            img[no].present = 1;
            img[no].len = ln < 0 ? -1 : ln;
            img[no].v = r->b + p;
        }
        if (ln > 0) p += ln;
    }
    return p;
}

/* Read a column list into img (cleared first; later entries win, as in a dict). */
static pos_t read_cols(const Rec *r, pos_t p, Val *img, Py_ssize_t ncols) {
    memset(img, 0, sizeof(Val) * (size_t)ncols);
    return update_cols(r, p, img, ncols);
}

/* ---- tables ---------------------------------------------------------------------------- */
typedef struct {
    uint32_t obj;
    PyObject *qualified; /* str */
    PyObject *name;      /* bytes */
    uint32_t dataobj;
    int captured, hooked;
    int befores; /* decode.BEFORES_*: 0 none, 1 a before-image record, 2 FULL, 3 COMPACT */
    int full_deletes; /* decode.FULL_DELETES (NOCOMPRESSDELETES): a delete's whole row */
    Py_ssize_t ncols;
    uint8_t *kinds;
    PyObject *entries; /* tuple: the Python entry converter of each column */
    Py_ssize_t nkey;
    Py_ssize_t *key;
} Table;

#define XID_CACHE 256

typedef struct {
    PyObject_HEAD
    Table *tables;
    Py_ssize_t ntables;
    Py_ssize_t *slots; /* open addressing: index into tables, -1 empty */
    Py_ssize_t nslots;
    Py_ssize_t maxcols;
    Val *img[5]; /* after, before, merged, key, row scratch */
    PyObject *kind[6]; /* ROW, BEGIN, COMMIT, ROLLBACK, SESSION, UNDO */
    PyObject *io[7]; /* INSERT, DELETE, FIELDCOMP, KEYFIELDCOMP, before FIELDCOMP, UNIFIED,
                        UNIFIED PK */
    PyObject *empty_str, *empty_bytes, *empty_tuple, *zero;
    uint64_t xid_key[XID_CACHE];
    PyObject *xid_text[XID_CACHE];
} Walker;

enum { K_ROW, K_BEGIN, K_COMMIT, K_ROLLBACK, K_SESSION, K_UNDO };
enum {
    IO_INSERT,
    IO_DELETE,
    IO_FIELDCOMP,
    IO_KEYFIELDCOMP,
    IO_BEFORE_FIELDCOMP,
    IO_UNIFIED,
    IO_UNIFIED_PK
};
enum { B_NONE, B_RECORD, B_FULL, B_COMPACT };
#define NIO 7

static const Table *find_table(const Walker *w, uint32_t obj) {
    if (!w->nslots) return NULL;
    Py_ssize_t mask = w->nslots - 1;
    for (Py_ssize_t i = (Py_ssize_t)((obj * 2654435761u) & (uint32_t)mask);; i = (i + 1) & mask) {
        Py_ssize_t t = w->slots[i];
        if (t < 0) return NULL;
        if (w->tables[t].obj == obj) return &w->tables[t];
    }
}

/* ---- text of ids ----------------------------------------------------------------------- */
static char *put_num(char *p, unsigned long long v, unsigned base) {
    static const char digits[] = "0123456789abcdef";
    char t[24];
    int n = 0;
    do {
        t[n++] = digits[v % base];
        v /= base;
    } while (v);
    while (n) *p++ = t[--n];
    return p;
}

static PyObject *ascii(const char *s, Py_ssize_t n) {
    PyObject *o = PyUnicode_New(n, 127);
    if (o) memcpy(PyUnicode_1BYTE_DATA(o), s, (size_t)n);
    return o;
}

/* "a.b.c" (a may be negative), in decimal or in lower-case hex: f"{a}.{b}.{c}" */
static PyObject *dotted(long long a, unsigned long long b, unsigned long long c, unsigned base) {
    char buf[80], *p = buf;
    if (a < 0) {
        *p++ = '-';
        a = -a;
    }
    p = put_num(p, (unsigned long long)a, base);
    *p++ = '.';
    p = put_num(p, b, base);
    *p++ = '.';
    p = put_num(p, c, base);
    return ascii(buf, p - buf);
}
static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64(char *out, uint64_t v, int width) {
    for (int i = width - 1; i >= 0; i--) {
        out[i] = B64[v % 64];
        v /= 64;
    }
}

/* ROWID text: miner.Miner.rowid (the RowId of data object, DBA's file and block, slot). */
static void rowid_text(char out[18], uint32_t dataobj, uint32_t dba, uint32_t slot) {
    b64(out, dataobj, 6);
    b64(out + 6, dba >> 22, 3);
    b64(out + 9, dba & 0x3FFFFF, 6);
    b64(out + 15, slot, 3);
}

static PyObject *xid_of(Walker *w, const uint8_t *raw) {
    uint64_t key;
    memcpy(&key, raw, 8);
    unsigned h = (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 56) % XID_CACHE;
    if (w->xid_text[h] && w->xid_key[h] == key) return w->xid_text[h];
    PyObject *t = dotted(u16(raw, 0), u16(raw, 2), u32(raw, 4), 10);
    if (!t) return NULL;
    Py_XSETREF(w->xid_text[h], t);
    w->xid_key[h] = key;
    return t;
}

/* (cls - 15) // 2 with Python's floor division */
static long usn_of(unsigned cls) {
    long v = (long)cls - UNDO_CLASS_BASE;
    return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

/* ---- values: engine/extract/values.number_text and the character types ----------------- */
/* digits[0:n] without its leading zeros, "0" when they are all zeros: Python's
 * (digits[:n].lstrip("0") or "0"). Returns the characters written. */
static int put_int(char *out, const char *digits, int n) {
    int i = 0;
    while (i < n && digits[i] == '0') i++;
    if (i == n) {
        out[0] = '0';
        return 1;
    }
    memcpy(out, digits + i, (size_t)(n - i));
    return n - i;
}

/* The text of a canonical NUMBER into out (at least 96 bytes); its length, or -1 when the
 * Python reference must say (values.number_text falls back to it there). */
static int number_text(const uint8_t *raw, int n, char *out) {
    if (n == 1 && raw[0] == 0x80) {
        out[0] = '0';
        return 1;
    }
    if (n < 2) return -1;
    unsigned head = raw[0];
    int exp;
    const uint8_t *body;
    int blen;
    int neg;
    if (head >= 0x80) {
        if (head < 0xC1 - 10 || head > 0xC1 + 10) return -1;
        exp = (int)head - 0xC1;
        body = raw + 1;
        blen = n - 1;
        neg = 0;
    } else {
        if (head > 0x3E + 10 || head < 0x3E - 10) return -1;
        exp = 0x3E - (int)head;
        body = raw + 1;
        blen = raw[n - 1] == 0x66 ? n - 2 : n - 1;
        neg = 1;
    }
    if (blen <= 0) return -1;
    char digits[48];
    for (int i = 0; i < blen; i++) {
        int b = body[i], d;
        if (!neg) {
            if (b < 1 || b > 100) return -1;
            d = b - 1;
        } else {
            if (b < 2 || b > 101) return -1;
            d = 101 - b;
        }
        if (i == 0 && d == 0) return -1;
        if (i < 24) {
            digits[2 * i] = (char)('0' + d / 10);
            digits[2 * i + 1] = (char)('0' + d % 10);
        }
    }
    if (blen > 20) return -1;
    int nd = 2 * blen;
    int point = 2 * (exp + 1);
    int o = 0;
    if (neg) out[o++] = '-';
    if (point >= nd) { /* an integer: the digits (the first pair is not 0), then zeros */
        o += put_int(out + o, digits, nd);
        for (int k = 0; k < point - nd; k++) out[o++] = '0';
        return o;
    }
    int fstart = point > 0 ? point : 0;
    int fend = nd;
    while (fend > fstart && digits[fend - 1] == '0') fend--;
    if (point > 0) o += put_int(out + o, digits, point);
    else out[o++] = '0';
    if (fend == fstart) return o; /* no fraction: point > 0 here */
    out[o++] = '.';
    for (int k = 0; k < -point; k++) out[o++] = '0';
    memcpy(out + o, digits + fstart, (size_t)(fend - fstart));
    o += fend - fstart;
    return o;
}

/* A growing output buffer for column entries. */
typedef struct {
    uint8_t *p;
    size_t len, cap;
} Out;

static int out_room(Out *o, size_t more) {
    if (o->len + more <= o->cap) return 0;
    size_t cap = o->cap ? o->cap : 256;
    while (cap < o->len + more) cap *= 2;
    uint8_t *np = PyMem_Realloc(o->p, cap);
    if (!np) {
        PyErr_NoMemory();
        return -1;
    }
    o->p = np;
    o->cap = cap;
    return 0;
}

static void be16(uint8_t *p, unsigned v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* One column entry (trail codec column_entry): index, 4 + size, null indicator, size, value */
static int put_entry(Out *o, unsigned index, const char *text, int size) {
    if (out_room(o, 8 + (size_t)(size > 0 ? size : 0)) < 0) return FAIL;
    uint8_t *p = o->p + o->len;
    be16(p, index);
    if (size < 0) {
        be16(p + 2, 4);
        be16(p + 4, 0xFFFF);
        be16(p + 6, 0);
        o->len += 8;
        return 0;
    }
    be16(p + 2, 4 + (unsigned)size);
    be16(p + 4, 0);
    be16(p + 6, (unsigned)size);
    memcpy(p + 8, text, (size_t)size);
    o->len += 8 + (size_t)size;
    return 0;
}

static int valid_utf8(const uint8_t *v, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        if (v[i] & 0x80) goto slow;
    return 1;
slow: {
    PyObject *s = PyUnicode_DecodeUTF8((const char *)v, n, "strict");
    if (!s) {
        PyErr_Clear();
        return 0;
    }
    Py_DECREF(s);
    return 1;
}
}

/* Entry of column i of table t, value val: 0, DECLINE or FAIL. */
static int column(Out *o, const Table *t, Py_ssize_t i, const Val *val) {
    if (val->len < 0 || !val->present) return put_entry(o, (unsigned)i, NULL, -1);
    uint8_t kind = t->kinds[i];
    if (kind == K_NUMBER) {
        char text[96];
        int n = number_text(val->v, val->len, text);
        if (n >= 0) return put_entry(o, (unsigned)i, text, n);
    } else if (kind == K_TEXT) {
        if (val->len > MAX_VALUE_LENGTH) return DECLINE;
        if (valid_utf8(val->v, val->len))
            return put_entry(o, (unsigned)i, (const char *)val->v, val->len);
        return DECLINE;
    }
    /* the column's Python entry converter */
    PyObject *raw = PyBytes_FromStringAndSize((const char *)val->v, val->len);
    if (!raw) return FAIL;
    PyObject *e = PyObject_CallOneArg(PyTuple_GET_ITEM(t->entries, i), raw);
    Py_DECREF(raw);
    if (!e) {
        PyErr_Clear(); /* Python says what is wrong when it decodes the record */
        return DECLINE;
    }
    char *s;
    Py_ssize_t n;
    if (PyBytes_AsStringAndSize(e, &s, &n) < 0) {
        Py_DECREF(e);
        return FAIL;
    }
    int rc = 0;
    if (out_room(o, (size_t)n) < 0) rc = FAIL;
    else {
        memcpy(o->p + o->len, s, (size_t)n);
        o->len += (size_t)n;
    }
    Py_DECREF(e);
    return rc;
}

/* The entries of an image: full (every column, absent = NULL) or keyed (present ones). */
static int entries(Out *o, const Table *t, const Val *img, int full) {
    for (Py_ssize_t i = 0; i < t->ncols; i++) {
        if (!full && !img[i].present) continue;
        int rc = column(o, t, i, &img[i]);
        if (rc) return rc;
    }
    return 0;
}

static int has_any(const Val *img, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (img[i].present) return 1;
    return 0;
}

static int same(const Val *a, const Val *b) {
    if (a->len < 0 || b->len < 0) return a->len < 0 && b->len < 0;
    return a->len == b->len && memcmp(a->v, b->v, (size_t)a->len) == 0;
}

/* ---- events ---------------------------------------------------------------------------- */
typedef struct {
    PyObject *thread, *offset, *stop, *scn, *subscn, *micros;
} Head;

/* (kind, xid, *head, io_type, table, rowid, (), (), ref, user, name, "", record) */
static int emit(Walker *w, PyObject *out, PyObject *kind, PyObject *xid, const Head *h,
                PyObject *io, PyObject *table, PyObject *rowid, PyObject *ref, PyObject *user,
                PyObject *name, PyObject *record) {
    PyObject *e = PyTuple_New(18);
    if (!e) return FAIL;
    PyObject *items[18] = {kind, xid, h->thread, h->offset, h->stop, h->scn, h->subscn,
                           h->micros, io, table, rowid, w->empty_tuple, w->empty_tuple, ref,
                           user, name, w->empty_str, record};
    for (int i = 0; i < 18; i++) {
        Py_INCREF(items[i]);
        PyTuple_SET_ITEM(e, i, items[i]);
    }
    int rc = PyList_Append(out, e);
    Py_DECREF(e);
    return rc < 0 ? FAIL : 0;
}

/* A row event with its parts (name, data, key before image, ROWID): miner.Miner._emit. */
static int emit_row(Walker *w, PyObject *out, const Table *t, PyObject *xid, int io,
                    uint32_t dba, uint32_t slot, const Val *image, int full, const Val *before,
                    PyObject *ref, const Head *h) {
    if (t->hooked || slot >= 64 * 64 * 64) return DECLINE; /* RowId refuses such a slot */
    Out o = {0};
    int rc = entries(&o, t, image, full);
    size_t dlen = o.len;
    if (!rc && before && has_any(before, t->ncols)) rc = entries(&o, t, before, 0);
    if (rc) {
        PyMem_Free(o.p);
        return rc;
    }
    if (o.len + (size_t)PyBytes_GET_SIZE(t->name) > ROOM) {
        PyMem_Free(o.p);
        return DECLINE;
    }
    char rid[18];
    rowid_text(rid, t->dataobj, dba, slot);
    PyObject *data = PyBytes_FromStringAndSize((const char *)o.p, (Py_ssize_t)dlen);
    PyObject *bkey = o.len > dlen ? PyBytes_FromStringAndSize((const char *)o.p + dlen,
                                                              (Py_ssize_t)(o.len - dlen))
                                  : (Py_INCREF(w->empty_bytes), w->empty_bytes);
    PyMem_Free(o.p);
    PyObject *rb = PyBytes_FromStringAndSize(rid, 18);
    PyObject *rs = ascii(rid, 18);
    PyObject *parts = data && bkey && rb ? PyTuple_Pack(4, t->name, data, bkey, rb) : NULL;
    Py_XDECREF(data);
    Py_XDECREF(bkey);
    Py_XDECREF(rb);
    if (!parts || !rs) {
        Py_XDECREF(parts);
        Py_XDECREF(rs);
        return FAIL;
    }
    rc = emit(w, out, w->kind[K_ROW], xid, h, w->io[io], t->qualified, rs, ref, w->empty_str,
              w->empty_str, parts);
    Py_DECREF(parts);
    Py_DECREF(rs);
    return rc;
}

/* An undo body (5.1) from its start: the position past it; with img, the before image it
 * carries read into img: its row columns, then the supplemental key columns, which win
 * (they are the row's identity: miner._undo_row). */
static pos_t undo_body(const Rec *r, pos_t p, Val *img, Py_ssize_t ncols) {
    NEED(r, p, 42);
    unsigned bits = r->b[p + 33];
    p += 42;
    if (bits & 2) {
        p = skip_names(r, p);
        if (p >= 0) p = skip_ktb(r, p);
        if (p >= 0) p = img ? read_cols(r, p, img, ncols) : skip_cols(r, p);
        if (p >= 0) p = skip_rows(r, p);
        if (p >= 0) p = skip_ints(r, p);
        if (p < 0) return p;
    }
    if (bits & 4) {
        p = skip_index(r, p);
        if (p < 0) return p;
    }
    return img ? update_cols(r, p, img, ncols) : skip_cols(r, p);
}

/* The before image of the undo at `undo` (-1: none, an empty image) into img. */
static pos_t undo_row(const Rec *r, pos_t undo, Val *img, Py_ssize_t ncols) {
    memset(img, 0, sizeof(Val) * (size_t)ncols);
    if (undo < 0) return 0;
    pos_t p = undo_body(r, undo, img, ncols);
    return p < 0 ? p : 0;
}

static void key_of(const Table *t, const Val *before, Val *key, Py_ssize_t ncols) {
    memset(key, 0, sizeof(Val) * (size_t)ncols);
    for (Py_ssize_t k = 0; k < t->nkey; k++) {
        Py_ssize_t i = t->key[k];
        if (before[i].present) key[i] = before[i];
    }
}

/* The row op of the KDO at body (p: past its KTB; uba: the KTB's undo address or 0):
 * miner.Miner._rows. Returns the position after the body. */
static pos_t rows(Walker *w, const Rec *r, pos_t body, pos_t p, pos_t undo, uint32_t obj,
                  PyObject *xid, pos_t uba, unsigned cseq, const Head *h, PyObject *out,
                  Py_ssize_t offset) {
    uint32_t uobj = obj;
    if (undo >= 0) {
        NEED(r, undo, 8);
        uobj = u32(r->b, undo + 4);
    }
    const Table *t = find_table(w, uobj);
    if (!t) t = find_table(w, obj);
    if (!t || !t->captured) return skip_kdo_rest(r, p);
    PyObject *ref;
    if (uba) {
        NEED(r, uba, 8);
        ref = dotted(u32(r->b, uba), u16(r->b, uba + 4), u16(r->b, uba + 6), 16);
    } else {
        char buf[48], *q = put_num(buf, (unsigned long long)offset, 10);
        *q++ = ':';
        ref = ascii(buf, put_num(q, cseq, 10) - buf);
    }
    if (!ref) return FAIL;
    pos_t rc = DECLINE;
    Py_ssize_t n = t->ncols;
    Val *after = w->img[0], *before = w->img[1], *merged = w->img[2], *key = w->img[3];
    Val *scratch = w->img[4];
    const uint8_t *b = r->b;
    if (body + 25 > r->hi) goto done;
    uint32_t bdba = u32(b, body);
    unsigned slot = u16(b, body + 8);
    uint32_t nlen = u32(b, body + 21);
    char op[4] = {0};
    if (nlen == 3 && body + 28 <= r->hi) memcpy(op, b + body + 25, 3);
    p = read_cols(r, p, after, n);
    if (p < 0) goto fail;
    if (!strcmp(op, "IRP")) {
        p = skip_rows(r, p);
        if (p >= 0) p = skip_ints(r, p);
        if (p < 0) goto fail;
        int e = emit_row(w, out, t, xid, IO_INSERT, bdba, slot, after, 1, NULL, ref, h);
        rc = e ? e : p;
        goto done;
    }
    if (!strcmp(op, "QMI")) {
        CHECK(r, p, 2);
        unsigned nrows = u16(b, p);
        pos_t q = p + 2;
        /* first the positions: the whole body must read before any event is made */
        pos_t end = q;
        for (unsigned i = 0; i < nrows; i++) {
            end = skip_raw(r, end + 5);
            if (end >= 0) end = skip_cols(r, end);
            if (end < 0) {
                rc = end;
                goto done;
            }
        }
        pos_t after_rows = skip_ints(r, end);
        if (after_rows < 0) {
            rc = after_rows;
            goto done;
        }
        for (unsigned i = 0; i < nrows; i++) {
            unsigned rslot = u16(b, q);
            q = skip_raw(r, q + 5);
            q = read_cols(r, q, scratch, n);
            int e = emit_row(w, out, t, xid, IO_INSERT, bdba, rslot, scratch, 1, NULL, ref, h);
            if (e) {
                rc = e;
                goto done;
            }
        }
        rc = after_rows;
        goto done;
    }
    if (!strcmp(op, "DRP")) {
        p = skip_rows(r, p);
        if (p >= 0) p = skip_ints(r, p);
        if (p < 0) goto fail;
        pos_t u = undo_row(r, undo, before, n);
        if (u < 0) {
            rc = u;
            goto done;
        }
        key_of(t, before, key, n);
        int e = t->full_deletes
                    ? emit_row(w, out, t, xid, IO_DELETE, bdba, slot, before, 1, NULL, ref, h)
                    : emit_row(w, out, t, xid, IO_DELETE, bdba, slot, key, 0, NULL, ref, h);
        rc = e ? e : p;
        goto done;
    }
    if (!strcmp(op, "QMD")) {
        p = skip_rows(r, p);
        if (p < 0) goto fail;
        CHECK(r, p, 2);
        unsigned nslots = u16(b, p);
        pos_t slots = p + 2;
        p = slots + 4 * (pos_t)nslots;
        if (p > r->hi) goto done;
        /* the undo's rows: miner._undo_rows */
        pos_t q = -1;
        unsigned nurows = 0;
        if (undo >= 0) {
            CHECK(r, undo, 42);
            if (b[undo + 33] & 2) {
                q = skip_names(r, undo + 42);
                if (q >= 0) q = skip_ktb(r, q);
                if (q >= 0) q = skip_cols(r, q);
                if (q < 0) {
                    rc = q;
                    goto done;
                }
                CHECK(r, q, 2);
                nurows = u16(b, q);
                q += 2;
                pos_t chk = q; /* the whole list must read */
                for (unsigned i = 0; i < nurows; i++) {
                    chk = skip_raw(r, chk + 5);
                    if (chk >= 0) chk = skip_cols(r, chk);
                    if (chk < 0) {
                        rc = chk;
                        goto done;
                    }
                }
            }
        }
        for (unsigned i = 0; i < nslots; i++) {
            if (i < nurows) {
                q = skip_raw(r, q + 5);
                q = read_cols(r, q, before, n);
            } else {
                memset(before, 0, sizeof(Val) * (size_t)n);
            }
            key_of(t, before, key, n);
            int full = t->full_deletes;
            int e = emit_row(w, out, t, xid, IO_DELETE, bdba, u32(b, slots + 4 * (pos_t)i),
                             full ? before : key, full, NULL, ref, h);
            if (e) {
                rc = e;
                goto done;
            }
        }
        rc = p;
        goto done;
    }
    p = skip_rows(r, p);
    if (p >= 0) p = skip_ints(r, p);
    if (p < 0) goto fail;
    if (!strcmp(op, "URP")) {
        pos_t u = undo_row(r, undo, before, n);
        if (u < 0) {
            rc = u;
            goto done;
        }
        int changed = 0;
        memset(merged, 0, sizeof(Val) * (size_t)n);
        for (Py_ssize_t k = 0; k < t->nkey; k++) {
            Py_ssize_t i = t->key[k];
            if (!before[i].present) continue;
            merged[i] = before[i];
            if (after[i].present && !same(&before[i], &after[i])) changed = 1;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            if (after[i].present) merged[i] = after[i];
        for (Py_ssize_t k = 0; k < t->nkey; k++)
            if (!merged[t->key[k]].present) { /* no key in the redo: miner.py marks it */
                rc = DECLINE;
                goto done;
            }
        /* the images by the table's befores: decode.Decoder._update */
        int e;
        if (changed) { /* under UPDATERECORDFORMAT: GGSUnifiedPKUpdate */
            if (t->befores == B_NONE) key_of(t, before, key, n);
            int unified = t->befores == B_FULL || t->befores == B_COMPACT;
            e = emit_row(w, out, t, xid, unified ? IO_UNIFIED_PK : IO_KEYFIELDCOMP, bdba, slot,
                         merged, 0, t->befores == B_NONE ? key : before, ref, h);
        } else if (t->befores == B_RECORD) {
            e = emit_row(w, out, t, xid, IO_BEFORE_FIELDCOMP, bdba, slot, before, 0, NULL, ref, h);
            if (!e) e = emit_row(w, out, t, xid, IO_FIELDCOMP, bdba, slot, merged, 0, NULL, ref, h);
        } else if (t->befores == B_FULL || t->befores == B_COMPACT) {
            e = emit_row(w, out, t, xid, IO_UNIFIED, bdba, slot,
                         t->befores == B_FULL ? merged : after, 0, before, ref, h);
        } else {
            e = emit_row(w, out, t, xid, IO_FIELDCOMP, bdba, slot, merged, 0, NULL, ref, h);
        }
        rc = e ? e : p;
        goto done;
    }
    rc = p;
    goto done;
fail:
    rc = p;
done:
    Py_DECREF(ref);
    return rc;
}

/* One record: miner.Miner.record. Returns 0, DECLINE or FAIL. */
static int record(Walker *w, const uint8_t *b, pos_t hi, Py_ssize_t offset, Py_ssize_t stop,
                  PyObject *out) {
    Rec rr = {b, hi};
    const Rec *r = &rr;
    NEED(r, 0, REC_SIZE);
    unsigned flags = b[3];
    unsigned n = u16(b, 36);
    Head h = {0};
    int rc = DECLINE;
    PyObject *session_user = NULL, *session_name = NULL;
    h.thread = PyLong_FromUnsignedLong(u16(b, 0));
    h.offset = PyLong_FromSsize_t(offset);
    h.stop = PyLong_FromSsize_t(stop);
    h.scn = PyLong_FromUnsignedLongLong(u64(b, 18));
    h.subscn = PyLong_FromUnsignedLong(u16(b, 26));
    h.micros = PyLong_FromLongLong((long long)u64(b, 28));
    if (!h.thread || !h.offset || !h.stop || !h.scn || !h.subscn || !h.micros) {
        rc = FAIL;
        goto out;
    }
    pos_t p = REC_SIZE + (flags & 1 ? LWN_SIZE : 0);
    PyObject *xid = NULL; /* borrowed from the cache or owned in xid_own */
    PyObject *xid_own = NULL;
    pos_t undo = -1;
    for (unsigned i = 0; i < n; i++) {
        if (p < 0 || p + CV_SIZE > hi) goto decline;
        unsigned tag = b[p + AT_TAG];
        if (tag == T_UNDO) {
            undo = p = p + CV_SIZE;
            if (p + 42 > hi) goto decline;
            PyObject *x = xid_of(w, b + p + 34);
            if (!x) goto fail;
            Py_INCREF(x);
            Py_XSETREF(xid_own, x);
            xid = x;
            p = undo_body(r, p, NULL, 0);
            if (p < 0) goto decline;
            continue;
        }
        if (tag == T_INDEX) {
            if (i == n - 1) {
                p = hi;
                break;
            }
            p = skip_index(r, p + CV_SIZE);
            if (p < 0) goto decline;
            continue;
        }
        unsigned layer = b[p];
        unsigned cls = u16(b, p + 4);
        uint32_t dba = u32(b, p + 8);
        uint32_t obj = u32(b, p + 12);
        unsigned cseq = u16(b, p + 24);
        (void)dba;
        p += CV_SIZE;
        if (tag == T_KDO) {
            pos_t body = p;
            pos_t k = skip_names(r, p);
            if (k < 0 || k + 41 > hi) goto decline;
            unsigned kind = b[k + 1];
            const uint8_t *kraw = b + k + 2;
            pos_t uba = u32(b, k + 10) ? k + 10 : 0;
            p = skip_ktb(r, k);
            if (p < 0) goto decline;
            if (layer != 11) {
                p = skip_kdo_rest(r, p);
                if (p < 0) goto decline;
                continue;
            }
            static const uint8_t zero[8] = {0};
            if (kind == 'F' && memcmp(kraw, zero, 8)) {
                PyObject *x = xid_of(w, kraw);
                if (!x) goto fail;
                Py_INCREF(x);
                Py_XSETREF(xid_own, x);
                xid = x;
            } else if (!xid) {
                p = skip_kdo_rest(r, p);
                if (p < 0) goto decline;
                continue;
            }
            p = rows(w, r, body, p, undo, obj, xid, uba, cseq, &h, out, offset);
            if (p == FAIL) goto fail;
            if (p < 0) goto decline;
        } else if (tag == T_SLOT) {
            if (p + 28 > hi) goto decline;
            PyObject *x = dotted(usn_of(cls), u16(b, p), u32(b, p + 2), 10);
            if (!x) goto fail;
            Py_XSETREF(xid_own, x);
            xid = x;
            p += 28;
            if (emit(w, out, w->kind[K_BEGIN], xid, &h, w->zero,
                     w->empty_str, Py_None, w->empty_str, w->empty_str, w->empty_str,
                     w->empty_bytes) < 0)
                goto fail;
        } else if (tag == T_COMMIT) {
            if (p + 26 > hi) goto decline;
            PyObject *cx = dotted(usn_of(cls), u16(b, p), u32(b, p + 2), 10);
            if (!cx) goto fail;
            unsigned flg = u16(b, p + 10);
            p += 26;
            int e = emit(w, out, w->kind[flg & ROLLBACK_FLAG ? K_ROLLBACK : K_COMMIT], cx, &h,
                         w->zero, w->empty_str, Py_None, w->empty_str, w->empty_str,
                         w->empty_str, w->empty_bytes);
            Py_DECREF(cx);
            if (e < 0) goto fail;
        } else if (tag == T_APPLIED) {
            if (p + 16 > hi) goto decline;
            PyObject *ux = dotted(u16(b, p), u16(b, p + 2), u32(b, p + 4), 10);
            PyObject *ref = dotted(u32(b, p + 8), u16(b, p + 12), u16(b, p + 14), 16);
            p += 16;
            int e = ux && ref ? emit(w, out, w->kind[K_UNDO], ux, &h, w->zero, w->empty_str,
                                     Py_None, ref, w->empty_str, w->empty_str, w->empty_bytes)
                              : FAIL;
            Py_XDECREF(ux);
            Py_XDECREF(ref);
            if (e < 0) goto fail;
        } else if (tag == T_SESSION) {
            p += SESSION_SIZE;
            PyObject *strs[3] = {NULL, NULL, NULL};
            for (int s = 0; s < 3; s++) {
                if (p + 4 > hi) goto session_decline;
                uint32_t len = u32(b, p);
                p += 4;
                if (len == NUL32) {
                    strs[s] = w->empty_str;
                    Py_INCREF(strs[s]);
                    continue;
                }
                if (p + (pos_t)len > hi) goto session_decline;
                strs[s] = PyUnicode_DecodeUTF8((const char *)b + p, (Py_ssize_t)len, "replace");
                if (!strs[s]) {
                    for (int k = 0; k < s; k++) Py_DECREF(strs[k]);
                    goto fail;
                }
                p += (pos_t)len;
            }
            Py_XSETREF(session_user, strs[0]);
            Py_XSETREF(session_name, strs[1]);
            Py_DECREF(strs[2]);
            continue;
        session_decline:
            for (int k = 0; k < 3; k++) Py_XDECREF(strs[k]);
            goto decline;
        } else if (tag == T_CLEANOUT) {
            if (p + 10 > hi) goto decline;
            p += 10 + 12 * (pos_t)u16(b, p + 8);
        } else if (tag != 0) {
            goto decline; /* direct load, DDL, opaque, or unknown: Python's */
        }
    }
    if (p != hi) goto decline;
    if (xid && session_user) {
        if (emit(w, out, w->kind[K_SESSION], xid, &h, w->zero, w->empty_str, Py_None,
                 w->empty_str, session_user, session_name, w->empty_bytes) < 0)
            goto fail;
    }
    rc = 0;
    goto done;
decline:
    rc = DECLINE;
    goto done;
fail:
    rc = FAIL;
done:
    Py_XDECREF(xid_own);
out:
    Py_XDECREF(session_user);
    Py_XDECREF(session_name);
    Py_XDECREF(h.thread);
    Py_XDECREF(h.offset);
    Py_XDECREF(h.stop);
    Py_XDECREF(h.scn);
    Py_XDECREF(h.subscn);
    Py_XDECREF(h.micros);
    return rc;
}

/* ---- the frame walk -------------------------------------------------------------------- */
static PyObject *walker_walk(Walker *w, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "walk(buf, base, pos, end, eof, out)");
        return NULL;
    }
    Py_ssize_t base = PyLong_AsSsize_t(args[1]);
    Py_ssize_t pos = PyLong_AsSsize_t(args[2]);
    Py_ssize_t end = PyLong_AsSsize_t(args[3]);
    Py_ssize_t eof = PyLong_AsSsize_t(args[4]);
    PyObject *out = args[5];
    if (PyErr_Occurred()) return NULL;
    if (!PyList_Check(out)) {
        PyErr_SetString(PyExc_TypeError, "out must be a list");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    const uint8_t *B = view.buf;
    Py_ssize_t n = view.len;
    Py_ssize_t frames = 0, last = -1;
    while ((end < 0 || pos < end) && pos < eof) {
        Py_ssize_t lo = pos - base;
        if (lo < 0 || pos + FRAME > eof || lo + FRAME > n) break;
        uint32_t length = u32(B, lo), crc = u32(B, lo + 4);
        if ((length == 0 && pos + FRAME >= eof) || length > MAX_RECORD) break;
        Py_ssize_t total = FRAME + (Py_ssize_t)length;
        if (pos + total > eof || lo + total > n) break;
        if (crc32_of(B + lo + FRAME, length) != crc) break;
        Py_ssize_t nxt = pos + total;
        Py_ssize_t offset = (pos / PAYLOAD + 1) * BLOCK + BLOCK_HEAD + pos % PAYLOAD;
        Py_ssize_t stop = (nxt / PAYLOAD + 1) * BLOCK + BLOCK_HEAD + nxt % PAYLOAD;
        Py_ssize_t mark = PyList_GET_SIZE(out);
        int rc = record(w, B + lo + FRAME, (pos_t)length, offset, stop, out);
        if (rc == FAIL) {
            PyBuffer_Release(&view);
            return NULL;
        }
        if (rc == DECLINE) {
            if (PyList_SetSlice(out, mark, PyList_GET_SIZE(out), NULL) < 0) {
                PyBuffer_Release(&view);
                return NULL;
            }
            break;
        }
        frames++;
        last = stop;
        pos = nxt;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("nnn", pos, frames, last);
}

/* payloads(keep, data, block, sequence) -> (bytes, blocks): redo_scan.Window._read_blocks's
 * loop: `keep` then the payload areas of the blocks of `data` (the first is block number
 * `block`), as long as their headers hold (magic, number, sequence, CRC of the first 12
 * bytes); `blocks` says how many did, so that Python can say what is wrong with the next. */
static PyObject *py_payloads(PyObject *mod, PyObject *args) {
    Py_buffer keep, data;
    unsigned long block, sequence;
    if (!PyArg_ParseTuple(args, "y*y*kk", &keep, &data, &block, &sequence)) return NULL;
    const uint8_t *d = data.buf;
    Py_ssize_t n = data.len, blocks = 0, size = keep.len;
    for (Py_ssize_t i = 0; i + BLOCK_HEAD <= n; i += BLOCK) {
        if (u16(d, i) != BLOCK_MAGIC || u32(d, i + 4) != (uint32_t)(block + (unsigned long)blocks) ||
            u32(d, i + 8) != (uint32_t)sequence || crc32_of(d + i, 12) != u32(d, i + 12))
            break;
        size += (i + BLOCK <= n ? BLOCK : n - i) - BLOCK_HEAD;
        blocks++;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, size);
    if (out) {
        uint8_t *p = (uint8_t *)PyBytes_AS_STRING(out);
        memcpy(p, keep.buf, (size_t)keep.len);
        p += keep.len;
        for (Py_ssize_t k = 0; k < blocks; k++) {
            Py_ssize_t i = k * BLOCK, len = (i + BLOCK <= n ? BLOCK : n - i) - BLOCK_HEAD;
            memcpy(p, d + i + BLOCK_HEAD, (size_t)len);
            p += len;
        }
    }
    PyBuffer_Release(&keep);
    PyBuffer_Release(&data);
    if (!out) return NULL;
    return Py_BuildValue("Nn", out, blocks);
}

/* ora_payloads(data, block, sequence, block_size, big_endian) -> (bytes, blocks):
 * engine/redo/scan.Blocks.load's loop over Oracle redo blocks (engine/redo/layout.py:
 * BLOCK_HEADER; framing.checksum_fold): the payload areas (the 16-byte block header
 * removed) of the whole blocks of `data` (the first is block number `block`), joined, as
 * long as each holds: its 16-bit words XOR to 0 (the checksum at 14 makes them), signature
 * ORA_SIGNATURE and type ORA_TYPE_REDO in bytes 0 and 1, its number at 4 and the log's
 * sequence at 8 (in the file's byte order). `blocks` says how many did, so that Python
 * says what is wrong with the next. A test checks these constants against layout.py. */
#define ORA_HEAD 16
#define ORA_SIGNATURE 0x01
#define ORA_TYPE_REDO 0x22
#define ORA_BLOCK_AT 4
#define ORA_SEQUENCE_AT 8
static inline uint32_t ora_u32(const uint8_t *b, pos_t p, int big) {
    return big ? (uint32_t)b[p] << 24 | (uint32_t)b[p + 1] << 16 | (uint32_t)b[p + 2] << 8 |
                     (uint32_t)b[p + 3]
               : u32(b, p);
}
static int ora_block_ok(const uint8_t *d, Py_ssize_t bs, uint32_t number, uint32_t sequence,
                        int big) {
    if (d[0] != ORA_SIGNATURE || d[1] != ORA_TYPE_REDO) return 0;
    if (ora_u32(d, ORA_BLOCK_AT, big) != number || ora_u32(d, ORA_SEQUENCE_AT, big) != sequence)
        return 0;
    uint64_t x = 0;
    for (Py_ssize_t i = 0; i < bs; i += 8) {
        uint64_t w;
        memcpy(&w, d + i, 8);
        x ^= w;
    }
    x ^= x >> 32;
    x ^= x >> 16;
    return (x & 0xFFFF) == 0; /* either byte order: a 16-bit XOR is 0 in both */
}
static PyObject *py_ora_payloads(PyObject *mod, PyObject *args) {
    Py_buffer data;
    unsigned long block, sequence;
    Py_ssize_t bs;
    int big;
    if (!PyArg_ParseTuple(args, "y*kknp", &data, &block, &sequence, &bs, &big)) return NULL;
    if (bs != 512 && bs != 1024 && bs != 4096) {
        PyBuffer_Release(&data);
        PyErr_SetString(PyExc_ValueError, "block size must be 512, 1024 or 4096");
        return NULL;
    }
    const uint8_t *d = data.buf;
    Py_ssize_t whole = data.len / bs, blocks = 0;
    while (blocks < whole && ora_block_ok(d + blocks * bs, bs, (uint32_t)(block + (unsigned long)blocks),
                                          (uint32_t)sequence, big))
        blocks++;
    PyObject *out = PyBytes_FromStringAndSize(NULL, blocks * (bs - ORA_HEAD));
    if (out) {
        uint8_t *p = (uint8_t *)PyBytes_AS_STRING(out);
        for (Py_ssize_t k = 0; k < blocks; k++, p += bs - ORA_HEAD)
            memcpy(p, d + k * bs + ORA_HEAD, (size_t)(bs - ORA_HEAD));
    }
    PyBuffer_Release(&data);
    if (!out) return NULL;
    return Py_BuildValue("Nn", out, blocks);
}

/* number_text(raw) -> str | None: the C NUMBER text, None where Python's reference says. */
static PyObject *py_number_text(PyObject *mod, PyObject *arg) {
    char *s;
    Py_ssize_t n;
    if (PyBytes_AsStringAndSize(arg, &s, &n) < 0) return NULL;
    char text[96];
    int k = n > 64 ? -1 : number_text((const uint8_t *)s, (int)n, text);
    if (k < 0) Py_RETURN_NONE;
    return PyUnicode_FromStringAndSize(text, k);
}

/* crc32(data) -> int: zlib.crc32 */
static PyObject *py_crc32(PyObject *mod, PyObject *arg) {
    Py_buffer v;
    if (PyObject_GetBuffer(arg, &v, PyBUF_SIMPLE) < 0) return NULL;
    uint32_t c = crc32_of(v.buf, (size_t)v.len);
    PyBuffer_Release(&v);
    return PyLong_FromUnsignedLong(c);
}

/* ---- the Walker type ------------------------------------------------------------------- */
static void free_tables(Walker *w) {
    for (Py_ssize_t i = 0; i < w->ntables; i++) {
        Table *t = &w->tables[i];
        Py_XDECREF(t->qualified);
        Py_XDECREF(t->name);
        Py_XDECREF(t->entries);
        PyMem_Free(t->kinds);
        PyMem_Free(t->key);
    }
    PyMem_Free(w->tables);
    PyMem_Free(w->slots);
    for (int i = 0; i < 5; i++) PyMem_Free(w->img[i]);
    w->tables = NULL;
    w->slots = NULL;
    w->ntables = 0;
}

static void walker_dealloc(Walker *w) {
    free_tables(w);
    for (int i = 0; i < 6; i++) Py_XDECREF(w->kind[i]);
    for (int i = 0; i < NIO; i++) Py_XDECREF(w->io[i]);
    Py_XDECREF(w->empty_str);
    Py_XDECREF(w->empty_bytes);
    Py_XDECREF(w->empty_tuple);
    Py_XDECREF(w->zero);
    for (int i = 0; i < XID_CACHE; i++) Py_XDECREF(w->xid_text[i]);
    Py_TYPE(w)->tp_free((PyObject *)w);
}

static int load_table(Table *t, PyObject *obj, PyObject *spec) {
    PyObject *qualified, *name, *kinds, *key, *entries;
    unsigned long dataobj;
    int captured, hooked, befores;
    if (!PyArg_ParseTuple(spec, "UOkSOppO!i", &qualified, &name, &dataobj, &kinds, &key,
                          &captured, &hooked, &PyTuple_Type, &entries, &befores))
        return -1;
    if (!PyBytes_Check(name)) {
        PyErr_SetString(PyExc_TypeError, "table name must be bytes");
        return -1;
    }
    t->obj = (uint32_t)PyLong_AsUnsignedLong(obj);
    if (PyErr_Occurred()) return -1;
    t->dataobj = (uint32_t)dataobj;
    t->captured = captured;
    t->hooked = hooked;
    t->befores = befores & 15;
    t->full_deletes = (befores & 16) != 0;
    t->ncols = PyBytes_GET_SIZE(kinds);
    if (PyTuple_GET_SIZE(entries) != t->ncols) {
        PyErr_SetString(PyExc_ValueError, "one entry converter per column");
        return -1;
    }
    t->kinds = PyMem_Malloc((size_t)t->ncols + 1);
    if (!t->kinds) return -1;
    memcpy(t->kinds, PyBytes_AS_STRING(kinds), (size_t)t->ncols);
    PyObject *keys = PySequence_Fast(key, "key must be a sequence");
    if (!keys) return -1;
    t->nkey = PySequence_Fast_GET_SIZE(keys);
    t->key = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(t->nkey + 1));
    for (Py_ssize_t k = 0; t->key && k < t->nkey; k++) {
        t->key[k] = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(keys, k));
        if (t->key[k] < 0 || t->key[k] >= t->ncols) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "key column out of range");
            Py_DECREF(keys);
            return -1;
        }
    }
    Py_DECREF(keys);
    if (!t->key) return -1;
    Py_INCREF(qualified);
    Py_INCREF(name);
    Py_INCREF(entries);
    t->qualified = qualified;
    t->name = name;
    t->entries = entries;
    return 0;
}

/* Walker(tables, kinds, io_types): tables maps an object number to (qualified name, name
 * bytes, data object number, column kinds (bytes: 0 NUMBER, 1 character, 2 other), key
 * column indices, captured, hooked, entry converters, befores); kinds are the event kinds
 * ROW, BEGIN, COMMIT, ROLLBACK, SESSION, UNDO; io_types INSERT, DELETE, FIELDCOMP,
 * KEYFIELDCOMP, a FIELDCOMP's before image, GGSUnifiedUpdate, GGSUnifiedPKUpdate. */
static int walker_init(Walker *w, PyObject *args, PyObject *kw) {
    PyObject *tables, *kinds, *io;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyDict_Type, &tables, &PyTuple_Type, &kinds,
                          &PyTuple_Type, &io))
        return -1;
    if (PyTuple_GET_SIZE(kinds) != 6 || PyTuple_GET_SIZE(io) != NIO) {
        PyErr_SetString(PyExc_ValueError, "6 event kinds and 7 IO types");
        return -1;
    }
    free_tables(w);
    for (int i = 0; i < 6; i++) Py_XSETREF(w->kind[i], Py_NewRef(PyTuple_GET_ITEM(kinds, i)));
    for (int i = 0; i < NIO; i++) Py_XSETREF(w->io[i], Py_NewRef(PyTuple_GET_ITEM(io, i)));
    if (!w->empty_str) w->empty_str = PyUnicode_New(0, 0);
    if (!w->empty_bytes) w->empty_bytes = PyBytes_FromStringAndSize(NULL, 0);
    if (!w->empty_tuple) w->empty_tuple = PyTuple_New(0);
    if (!w->zero) w->zero = PyLong_FromLong(0);
    if (!w->empty_str || !w->empty_bytes || !w->empty_tuple || !w->zero) return -1;
    Py_ssize_t count = PyDict_GET_SIZE(tables);
    w->tables = PyMem_Calloc((size_t)count + 1, sizeof(Table));
    if (!w->tables) return -1;
    Py_ssize_t it = 0;
    PyObject *obj, *spec;
    w->maxcols = 1;
    while (PyDict_Next(tables, &it, &obj, &spec)) {
        Table *t = &w->tables[w->ntables++];
        if (load_table(t, obj, spec) < 0) return -1;
        if (t->ncols > w->maxcols) w->maxcols = t->ncols;
    }
    w->nslots = 16;
    while (w->nslots < 2 * (w->ntables + 1)) w->nslots *= 2;
    w->slots = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)w->nslots);
    if (!w->slots) return -1;
    for (Py_ssize_t i = 0; i < w->nslots; i++) w->slots[i] = -1;
    Py_ssize_t mask = w->nslots - 1;
    for (Py_ssize_t t = 0; t < w->ntables; t++) {
        Py_ssize_t i = (Py_ssize_t)((w->tables[t].obj * 2654435761u) & (uint32_t)mask);
        while (w->slots[i] >= 0) i = (i + 1) & mask;
        w->slots[i] = t;
    }
    for (int i = 0; i < 5; i++) {
        w->img[i] = PyMem_Calloc((size_t)w->maxcols, sizeof(Val));
        if (!w->img[i]) return -1;
    }
    return 0;
}

static PyMethodDef walker_methods[] = {
    {"walk", (PyCFunction)(void (*)(void))walker_walk, METH_FASTCALL,
     "walk(buf, base, pos, end, eof, out) -> (pos, frames, last stop)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject WalkerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "engine._native.redomine.Walker",
    .tp_basicsize = sizeof(Walker),
    .tp_dealloc = (destructor)walker_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The miner's record walk over loaded redo frames.",
    .tp_methods = walker_methods,
    .tp_init = (initproc)walker_init,
    .tp_new = PyType_GenericNew,
};

static PyMethodDef module_methods[] = {
    {"number_text", py_number_text, METH_O, "NUMBER bytes to text (None: not canonical)."},
    {"crc32", py_crc32, METH_O, "zlib's CRC-32 of a buffer."},
    {"payloads", py_payloads, METH_VARARGS,
     "payloads(keep, data, block, sequence) -> (keep + payload areas, blocks whose header holds)"},
    {"ora_payloads", py_ora_payloads, METH_VARARGS,
     "ora_payloads(data, block, sequence, block_size, big_endian) -> (payload areas, good blocks)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "redomine",
    .m_doc = "The Extract miner's record walk in C.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit_redomine(void) {
    crc_init();
    if (PyType_Ready(&WalkerType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddObjectRef(m, "Walker", (PyObject *)&WalkerType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
