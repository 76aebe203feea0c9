/*
 * redomine: the Extract miner's record walk in C (engine/extract/tasks/miner.py is its reference).
 *
 * Walker.walk(buf, pos, hi, base, first_block, block_size, start, end, lwn_scn, micros,
 * thread, vector_header_size, big_endian, out) walks the Oracle redo records of one LWN loaded by
 * engine/redo/scan.py (its records lie in buf[base:hi], block headers removed) from `pos`,
 * and decodes each record whose first byte lies in [start, end) exactly as
 * miner.Miner.record does, appending the same event tuples to `out`. It stops at the first
 * record it leaves to Python: a malformed one, or one it does not read exactly as Python
 * does (a field shorter than Python reads, a hooked table, a value the Python converters
 * must see, a record too large, an update without its key columns). Direct-path loads
 * (19.1) and DDL (24.1) are read here too.
 * The Python path then handles that one record and calls walk again: what leaves here is
 * byte for byte what miner.py would have produced, which the tests check. Both byte
 * orders: every multi-byte field of a log is read in the log's order (`big`), the row
 * format's own 2-byte lengths (0xFE) big-endian in both, as Oracle writes them.
 *
 * Column values: NUMBER (canonical, exponent within +-10, at most 20 digit bytes) and the
 * character types are converted here; every other value goes through the column's Python
 * entry converter (engine/extract/tasks/values.py).
 *
 * ora_payloads(...) is engine/redo/scan.Blocks.load's block check and payload join.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "crc32.h"
#include <stdint.h>
#include <string.h>

/* ---- layout: engine/redo/layout.py and engine/redo/vectors.py's *_AT tables ---------------
 * Every offset here is one of theirs, named AT_<TABLE>_<field> after the table and field it
 * restates; tests/extract/test_miner.py (test_the_c_layout_is_the_python_tables) checks each
 * against the table, so that a format fact changed there fails until it is changed here. */
#define AT_RECORD_HEADER_size 0
#define AT_RECORD_HEADER_vld 4
#define AT_RECORD_HEADER_scn_wrap 6
#define AT_RECORD_HEADER_scn 8
#define AT_RECORD_HEADER_subscn 12
#define SIZE_RECORD_HEADER 24
#define SIZE_LWN_HEADER 68
#define VLD_LWN 0x04
#define AT_VECTOR_HEADER_layer 0
#define AT_VECTOR_HEADER_code 1
#define AT_VECTOR_HEADER_cls 2
#define AT_VECTOR_HEADER_obj_high 6
#define AT_VECTOR_HEADER_dba 8
#define AT_VECTOR_HEADER_seq 20
#define AT_VECTOR_HEADER_obj_low 22
#define AT_VECTOR_HEADER_con_id 24 /* the 12c header's (32 bytes) */
#define SIZE_VECTOR_HEADER_12C 32
#define SIZE_VECTOR_HEADER_11G 24
#define SIZE_VECTOR_HEADER_12C 32
#define MAX_FIELDS 16384 /* layout.MAX_FIELDS */
#define AT_KTUDB_usn 8   /* usn u16, slt u16, sqn u32: an xid's 8 bytes (xid_of) */
#define AT_KTUDB_slt 10
#define AT_KTUDB_sqn 12
#define AT_KTUB_objn 0
#define AT_KTUB_opc_layer 16
#define AT_KTUB_opc_code 17
#define AT_KTB_op 0
#define AT_KTB_usn 8
#define AT_KTB_slt 10
#define AT_KTB_sqn 12
#define AT_KTB_uba_dba 16
#define AT_KTB_uba_seq 20
#define AT_KTB_uba_rec 22
#define SIZE_KTB 24
#define SIZE_KTB_ITL 40
#define KTB_CLEANOUT 0x10
#define AT_CLEANOUT_n 8
#define SIZE_CLEANOUT 12
#define SIZE_CLEANOUT_ENTRY 12
#define AT_KDO_bdba 0
#define AT_KDO_op 10
#define AT_KDO_flags 11
#define KDO_FLAG_ONE_FIELD 0x80  /* vectors.KDO_FLAG_ONE_FIELD */
#define KDO_FLAG_COMPRESSED 0x08 /* vectors.KDO_FLAG_COMPRESSED */
#define AT_KDO_ROW_fb 16
#define AT_KDO_URP_fb 16
#define FB_F 0x08 /* rowid.FB_F: the row's first piece */
#define FB_L 0x04 /* rowid.FB_L: its last */
#define KDO_OP_MASK 0x1F
#define AT_KDO_ROW_cc 18
#define AT_KDO_ROW_slot 42
#define KDO_ROW_NULLS 45
#define AT_KDO_URP_slot 20
#define AT_KDO_URP_nnew 23
#define KDO_URP_NULLS 26
#define AT_KDO_SLOT_slot 16
#define AT_KDO_ARRAY_nrow 18
#define AT_KTUDH_slt 0
#define AT_KTUDH_sqn 4
#define AT_KTUCM_slt 0
#define AT_KTUCM_sqn 4
#define AT_KTUCM_flg 16
#define SIZE_KTUCM 20
#define SIZE_KTUCF 12
#define KTUCM_ROLLBACK 0x04
#define AT_UNDO_APPLIED_usn 0
#define AT_UNDO_APPLIED_uba_dba 8
#define AT_UNDO_APPLIED_uba_seq 12
#define AT_UNDO_APPLIED_uba_rec 14
#define SIZE_UNDO_APPLIED 16
#define SIZE_KTUB 28
#define SIZE_KTUDB 20
#define SIZE_KTUDH 32
#define AT_KTBBH_objd 4 /* 19.1: a data block image (vectors.KTBBH_AT ...) */
#define AT_KTBBH_itc 16
#define AT_KTBBH_bdba 20
#define SIZE_KTBBH_ITL 24 /* the ITL list's start and an entry's size (vectors.KTBBH_ITL) */
#define AT_KTBBH_ITL_usn 0
#define AT_KTBBH_ITL_slt 2
#define AT_KTBBH_ITL_sqn 4
#define AT_KDBH_nrow 2
#define KDBH_DIRECTORY 14
#define AT_DDL_usn 0 /* 24.1 */
#define AT_DDL_slt 2
#define AT_DDL_sqn 4
#define AT_DDL_obj 8
#define SIZE_DDL 12
#define AT_SUPP_fb 1
#define AT_SUPP_cc 2
#define SIZE_SUPP 20
#define SUPP_TYPE 1
#define SESSION_FIELDS 8
#define UNDO_CLS_FIRST 15
#define ROOM (65535 - 200)
#define MAX_VALUE_LENGTH (0xFFFF - (4 * 4 + 35 + 8))

enum { K_NUMBER = 0, K_TEXT = 1, K_PYTHON = 2 };

/* Results of the body readers: a position, or one of these. */
#define DECLINE (-1) /* leave the record to Python */
#define FAIL (-2)    /* a Python exception is set */

typedef Py_ssize_t pos_t;

/* ---- reads in the log's byte order (the caller checks bounds) -------------------------- */
static inline uint16_t u16(const uint8_t *b, pos_t p) { return (uint16_t)(b[p] | b[p + 1] << 8); }
static inline uint32_t u32(const uint8_t *b, pos_t p) {
    return (uint32_t)b[p] | (uint32_t)b[p + 1] << 8 | (uint32_t)b[p + 2] << 16 |
           (uint32_t)b[p + 3] << 24;
}
static inline uint16_t g16(int big, const uint8_t *b, pos_t p) {
    return big ? (uint16_t)(b[p] << 8 | b[p + 1]) : u16(b, p);
}
static inline uint32_t g32(int big, const uint8_t *b, pos_t p) {
    return big ? (uint32_t)b[p] << 24 | (uint32_t)b[p + 1] << 16 | (uint32_t)b[p + 2] << 8 |
                     (uint32_t)b[p + 3]
               : u32(b, p);
}

/* One record's bytes: reads must stay inside [0, hi); big: the log is big-endian. */
typedef struct {
    const uint8_t *b;
    pos_t hi;
    int big;
} Rec;

/* A field of the record r's log at b + p, in the log's byte order. */
#define R16(b, p) g16(r->big, (b), (p))
#define R32(b, p) g32(r->big, (b), (p))

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

/* ---- row images ------------------------------------------------------------------------ */
/* A column of an image: absent, NULL, or bytes. Only columns < the table's count matter
 * to what is emitted (miner._Columns drops the others), so an image is an array of them. */
typedef struct {
    const uint8_t *v;
    int32_t len; /* -1: NULL */
    uint8_t present;
} Val;

/* One change vector: its header and where its fields lie (framing._vector_at). */
typedef struct {
    unsigned layer, code, cls, seq;
    uint32_t dba, obj;
    long con_id; /* the 12c header's container id; 0 in an 11g header (framing) */
    Py_ssize_t nf;
    pos_t *fp;    /* field positions in the record */
    uint16_t *fl; /* field lengths */
} Vec;

/* ---- tables ---------------------------------------------------------------------------- */
typedef struct {
    uint32_t obj;
    PyObject *qualified; /* str */
    PyObject *name;      /* bytes */
    uint32_t dataobj;
    int captured, hooked;
    int befores; /* decode.BEFORES_*: 0 none, 1 a before-image record, 2 FULL, 3 COMPACT */
    int full_deletes; /* decode.FULL_DELETES (NOCOMPRESSDELETES): a delete's whole row */
    int truncates;    /* GETTRUNCATES: a TRUNCATE of it is a purge of its rows */
    long con_id; /* an attached database's table: its container (-1: any) */
    int strict;  /* an attached database's table (a container given): see rows() */
    Py_ssize_t ncols;
    uint8_t *kinds;
    PyObject *entries; /* tuple: the Python entry converter of each column */
    Py_ssize_t nkey;
    Py_ssize_t *key;
} Table;

#define XID_CACHE 256
#define NKIND 7
#define NIO 8

typedef struct {
    PyObject_HEAD
    Table *tables;
    Py_ssize_t ntables;
    Py_ssize_t *slots; /* open addressing: index into tables, -1 empty */
    Py_ssize_t nslots;
    Py_ssize_t maxcols;
    int strict; /* a table has a container (an attached database's redo): see rows() */
    Val *img[5]; /* after, before, merged, key, row scratch */
    Vec vec[2];  /* the vector read, and the undo (5.1) the next ones bind to */
    PyObject *kind[NKIND]; /* ROW, BEGIN, COMMIT, ROLLBACK, SESSION, UNDO, DDL */
    PyObject *io[NIO]; /* INSERT, DELETE, FIELDCOMP, KEYFIELDCOMP, before FIELDCOMP, UNIFIED,
                        UNIFIED PK, PURGEDATA */
    PyObject *empty_str, *empty_bytes, *empty_tuple, *zero;
    uint64_t xid_key[XID_CACHE];
    PyObject *xid_text[XID_CACHE];
} Walker;

enum { K_ROW, K_BEGIN, K_COMMIT, K_ROLLBACK, K_SESSION, K_UNDO, K_DDL };
enum {
    IO_INSERT,
    IO_DELETE,
    IO_FIELDCOMP,
    IO_KEYFIELDCOMP,
    IO_BEFORE_FIELDCOMP,
    IO_UNIFIED,
    IO_UNIFIED_PK,
    IO_PURGEDATA
};
enum { B_NONE, B_RECORD, B_FULL, B_COMPACT };

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

/* The text of xid usn.slt.sqn, remembered (borrowed). */
static PyObject *xid_text(Walker *w, unsigned usn, unsigned slt, uint32_t sqn) {
    uint64_t key = (uint64_t)usn << 48 | (uint64_t)slt << 32 | sqn;
    unsigned h = (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 56) % XID_CACHE;
    if (w->xid_text[h] && w->xid_key[h] == key) return w->xid_text[h];
    PyObject *t = dotted(usn, slt, sqn, 10);
    if (!t) return NULL;
    Py_XSETREF(w->xid_text[h], t);
    w->xid_key[h] = key;
    return t;
}

/* An xid's 8 bytes (usn u16, slt u16, sqn u32) in the log's byte order, as text. */
static PyObject *xid_of(Walker *w, const Rec *r, const uint8_t *raw) {
    return xid_text(w, R16(raw, 0), R16(raw, 2), R32(raw, 4));
}

/* (cls - 15) // 2 with Python's floor division */
static long usn_of(unsigned cls) {
    long v = (long)cls - UNDO_CLS_FIRST;
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
    if (val->len < 0 || !val->present || (t->strict && !val->len)) /* (empty: NULL, as
                                                   engine.redo.values reads an attached one) */
        return put_entry(o, (unsigned)i, NULL, -1);
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
static int emit_text(Walker *w, PyObject *out, PyObject *kind, PyObject *xid, const Head *h,
                     PyObject *io, PyObject *table, PyObject *rowid, PyObject *ref,
                     PyObject *user, PyObject *name, PyObject *text, PyObject *record) {
    PyObject *e = PyTuple_New(18);
    if (!e) return FAIL;
    PyObject *items[18] = {kind, xid, h->thread, h->offset, h->stop, h->scn, h->subscn,
                           h->micros, io, table, rowid, w->empty_tuple, w->empty_tuple, ref,
                           user, name, text, record};
    for (int i = 0; i < 18; i++) {
        Py_INCREF(items[i]);
        PyTuple_SET_ITEM(e, i, items[i]);
    }
    int rc = PyList_Append(out, e);
    Py_DECREF(e);
    return rc < 0 ? FAIL : 0;
}

static int emit(Walker *w, PyObject *out, PyObject *kind, PyObject *xid, const Head *h,
                PyObject *io, PyObject *table, PyObject *rowid, PyObject *ref, PyObject *user,
                PyObject *name, PyObject *record) {
    return emit_text(w, out, kind, xid, h, io, table, rowid, ref, user, name, w->empty_str,
                     record);
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

static void key_of(const Table *t, const Val *before, Val *key, Py_ssize_t ncols) {
    memset(key, 0, sizeof(Val) * (size_t)ncols);
    for (Py_ssize_t k = 0; k < t->nkey; k++) {
        Py_ssize_t i = t->key[k];
        if (before[i].present) key[i] = before[i];
    }
}

/* ---- one change vector: its header and where its fields lie (framing._vector_at) ------- */

/* The vector at p of a record ending at hi, header size hs: its end (DECLINE: malformed). */
static pos_t vector_at(const Rec *r, pos_t p, pos_t hs, Vec *v) {
    const uint8_t *b = r->b;
    NEED(r, p, hs + 2);
    unsigned alen = R16(b, p + hs);
    if (alen < 2 || alen % 2 || (alen - 2) / 2 > MAX_FIELDS) return DECLINE;
    NEED(r, p + hs, alen);
    Py_ssize_t n = (alen - 2) / 2;
    v->layer = b[p + AT_VECTOR_HEADER_layer];
    v->code = b[p + AT_VECTOR_HEADER_code];
    v->cls = R16(b, p + AT_VECTOR_HEADER_cls);
    v->dba = R32(b, p + AT_VECTOR_HEADER_dba);
    v->obj = (uint32_t)R16(b, p + AT_VECTOR_HEADER_obj_high) << 16 |
             R16(b, p + AT_VECTOR_HEADER_obj_low);
    v->seq = b[p + AT_VECTOR_HEADER_seq];
    v->con_id = hs >= SIZE_VECTOR_HEADER_12C ? (long)u16(b, p + AT_VECTOR_HEADER_con_id) : 0;
    v->nf = n;
    pos_t f = p + hs + ((alen + 3) & ~3u);
    const pos_t hi = r->hi;
    const uint8_t *lens = b + p + hs + 2;
    pos_t *fp = v->fp;
    uint16_t *fl = v->fl;
    /* the length array, one loop per byte order (the hottest reads of the walk) */
#define FIELDS(LEN)                                  \
    for (Py_ssize_t i = 0; i < n; i++) {             \
        unsigned ln = (LEN);                         \
        if (f + (pos_t)ln > hi) return DECLINE;      \
        fp[i] = f;                                   \
        fl[i] = (uint16_t)ln;                        \
        f += (ln + 3) & ~3u;                         \
    }
    if (r->big) FIELDS((unsigned)lens[2 * i] << 8 | lens[2 * i + 1])
    else FIELDS(u16(lens, 2 * i))
#undef FIELDS
    if (f > hi) return DECLINE;
    return f;
}

#define FLEN(v, i) ((Py_ssize_t)(i) < (v)->nf ? (Py_ssize_t)(v)->fl[i] : -1)

/* A KTB field (payloads._ktb_back): 1 when it reads, 0 when Python must say why not. */
static int ktb_ok(const Rec *r, const Vec *v, Py_ssize_t i) {
    Py_ssize_t n = FLEN(v, i);
    if (n < SIZE_KTB) return 0;
    unsigned op = r->b[v->fp[i] + AT_KTB_op];
    Py_ssize_t size = (op & 0x0F) == 4 ? SIZE_KTB_ITL : SIZE_KTB;
    if (n < size) return 0;
    if (op & KTB_CLEANOUT) {
        if (n < size + SIZE_CLEANOUT) return 0;
        unsigned k = R16(r->b, v->fp[i] + size + AT_CLEANOUT_n);
        if (n < size + SIZE_CLEANOUT + SIZE_CLEANOUT_ENTRY * (Py_ssize_t)k) return 0;
    }
    return 1;
}

static int null_bit(const uint8_t *kdo, Py_ssize_t klen, Py_ssize_t at, Py_ssize_t i) {
    Py_ssize_t byte = at + i / 8;
    return byte < klen && (kdo[byte] >> (i % 8)) & 1;
}

static void set_val(Val *img, Py_ssize_t ncols, Py_ssize_t no, const uint8_t *v, int32_t len) {
    if (no < 0 || no >= ncols) return;
    img[no].present = 1;
    img[no].v = v;
    img[no].len = len;
}

/* One row as a block holds it (payloads._rows_back / _one_row): fb, lb, cc, then cc columns
 * with Oracle's length bytes; with img, its columns into img (cleared first). Returns the
 * bytes it takes, or DECLINE where Python reads it otherwise (a length in the long form
 * that the short one would say: Python re-measures the row in the short form) or fails. */
static Py_ssize_t one_row(const uint8_t *buf, Py_ssize_t n, Val *img, Py_ssize_t ncols) {
    if (n < 3) return DECLINE;
    unsigned cc = buf[2];
    Py_ssize_t pos = 3;
    if (img) memset(img, 0, sizeof(Val) * (size_t)ncols);
    for (unsigned c = 0; c < cc; c++) {
        if (pos >= n) return DECLINE;
        unsigned ln = buf[pos++];
        if (ln == 0xFF) {
            if (img) set_val(img, ncols, c, NULL, -1);
            continue;
        }
        if (ln == 0xFE) {
            if (pos + 2 > n) return DECLINE;
            ln = (unsigned)buf[pos] << 8 | buf[pos + 1];
            pos += 2;
            if (ln < 0xFA) return DECLINE;
        } else if (ln >= 0xFA) {
            return DECLINE;
        }
        if (pos + (Py_ssize_t)ln > n) return DECLINE;
        if (img) set_val(img, ncols, c, buf + pos, (int32_t)ln);
        pos += ln;
    }
    return pos;
}

/* QMI rows (payloads._rows_back) in `buf[0:n]`, one per slot: with img, row `want`'s
 * columns into img. Returns 0, or DECLINE where Python reads them otherwise or fails. */
static int array_rows(const uint8_t *buf, Py_ssize_t n, unsigned nrows, unsigned want, Val *img,
                      Py_ssize_t ncols) {
    Py_ssize_t pos = 0;
    for (unsigned k = 0; k < nrows; k++) {
        Py_ssize_t got = one_row(buf + pos, n - pos, img && k == want ? img : NULL, ncols);
        if (got < 0) return DECLINE;
        pos += got;
    }
    return pos == n ? 0 : DECLINE;
}

/* The KDO at field k of v and the column fields after it (payloads._kdo_back): its op, bdba
 * and slot; with img, its columns (IRP: all cc; URP: the changed ones) read into img
 * (cleared first). Returns the next field index, or DECLINE. */
static Py_ssize_t kdo_at(const Rec *r, const Vec *v, Py_ssize_t k, unsigned *op, uint32_t *bdba,
                         unsigned *slot, Val *img, Py_ssize_t ncols) {
    const uint8_t *b = r->b;
    Py_ssize_t klen = FLEN(v, k);
    if (klen < 13) return DECLINE;
    const uint8_t *kdo = b + v->fp[k];
    *op = kdo[AT_KDO_op] & KDO_OP_MASK;
    *bdba = R32(kdo, AT_KDO_bdba);
    Py_ssize_t nxt = k + 1;
    if (img) memset(img, 0, sizeof(Val) * (size_t)ncols);
    if (*op == 2) { /* IRP */
        if (klen < AT_KDO_ROW_slot + 2) return DECLINE;
        unsigned cc = kdo[AT_KDO_ROW_cc];
        *slot = R16(kdo, AT_KDO_ROW_slot);
        if (nxt + (Py_ssize_t)cc > v->nf) return DECLINE;
        if (img)
            for (unsigned i = 0; i < cc; i++) {
                int null = null_bit(kdo, klen, KDO_ROW_NULLS, i);
                set_val(img, ncols, i, b + v->fp[nxt + i], null ? -1 : v->fl[nxt + i]);
            }
        return nxt + cc;
    }
    if (*op == 5) { /* URP */
        if (klen < KDO_URP_NULLS) return DECLINE;
        *slot = R16(kdo, AT_KDO_URP_slot);
        unsigned nnew = kdo[AT_KDO_URP_nnew];
        if (nnew && nxt < v->nf) {
            Py_ssize_t nl = v->fl[nxt];
            if (nl % 2) return DECLINE;
            const uint8_t *nums = b + v->fp[nxt];
            Py_ssize_t cnt = nl / 2;
            nxt++;
            if (nxt + cnt > v->nf) return DECLINE;
            if (img)
                for (Py_ssize_t i = 0; i < cnt; i++) {
                    int null = null_bit(kdo, klen, KDO_URP_NULLS, i);
                    set_val(img, ncols, R16(nums, 2 * i), b + v->fp[nxt + i],
                            null ? -1 : v->fl[nxt + i]);
                }
            nxt += cnt;
        }
        return nxt;
    }
    if (*op == 11 || *op == 12) { /* QMI, QMD: the slots, and QMI's rows */
        if (klen < AT_KDO_ARRAY_nrow + 1) return DECLINE;
        unsigned nrow = kdo[AT_KDO_ARRAY_nrow];
        if (nxt >= v->nf || v->fl[nxt] % 2 || v->fl[nxt] / 2 != nrow) return DECLINE;
        *slot = 0;
        nxt++;
        if (*op == 12) return nxt;
        if (nxt >= v->nf) return DECLINE;
        if (array_rows(b + v->fp[nxt], v->fl[nxt], nrow, 0, NULL, 0) < 0) return DECLINE;
        return nxt + 1;
    }
    if (klen < AT_KDO_SLOT_slot + 2) return DECLINE; /* DRP and the others: the slot */
    *slot = R16(kdo, AT_KDO_SLOT_slot);
    return nxt;
}

/* A 5.1 (payloads._undo_back): checks it reads as Python reads it; with img, the before
 * image it carries (its row columns, then the supplemental ones, which win: miner._undo_row).
 * `qmi`: the position of its QMI rows field (-1: none) and their count. 0 or DECLINE. */
static int undo_of(const Rec *r, const Vec *u, Val *img, Py_ssize_t ncols, pos_t *qmi,
                   unsigned *nqmi, Py_ssize_t *qmi_len) {
    const uint8_t *b = r->b;
    if (qmi) *qmi = -1;
    if (img) memset(img, 0, sizeof(Val) * (size_t)ncols);
    if (FLEN(u, 0) < SIZE_KTUDB - 1 || FLEN(u, 1) < SIZE_KTUB) return DECLINE;
    unsigned ol = b[u->fp[1] + AT_KTUB_opc_layer], oc = b[u->fp[1] + AT_KTUB_opc_code];
    if (u->nf <= 3) return 0;
    if (ol == 10 && oc == 22) { /* an index undo: payloads._index_back's checks */
        if (!ktb_ok(r, u, 2) || FLEN(u, 3) < 16 || u->nf < 8) return DECLINE;
        if (u->fl[5] % 2 || u->fl[6] % 2) return DECLINE;
        unsigned action = b[u->fp[3]];
        if ((action < 1 || action > 4) && u->nf < 9) return DECLINE;
        return 0;
    }
    if (ol != 11 || oc != 1) return 0;
    if (!ktb_ok(r, u, 2)) return DECLINE;
    unsigned op, slot;
    uint32_t bdba;
    Py_ssize_t nxt = kdo_at(r, u, 3, &op, &bdba, &slot, img, ncols);
    if (nxt < 0 || nxt >= u->nf) return DECLINE;
    /* the supplemental header right after the row (payloads._supp_after) */
    Py_ssize_t at = nxt;
    if (u->fl[at] != SIZE_SUPP || b[u->fp[at]] != SUPP_TYPE) return DECLINE;
    unsigned cc = R16(b, u->fp[at] + AT_SUPP_cc);
    if ((cc ? at + 3 + (Py_ssize_t)cc : at + 1) != u->nf) return DECLINE;
    if (op == 11 && qmi) {
        unsigned nrow = b[u->fp[3] + AT_KDO_ARRAY_nrow];
        *qmi = u->fp[5];
        *nqmi = nrow;
        *qmi_len = u->fl[5];
    }
    if (!cc) return 0;
    if (u->fl[at + 1] != 2 * cc || u->fl[at + 2] != 2 * cc) return DECLINE;
    const uint8_t *nums = b + u->fp[at + 1], *lens = b + u->fp[at + 2];
    for (unsigned i = 0; i < cc; i++) {
        unsigned no = R16(nums, 2 * i);
        if (!no) return DECLINE;
        Py_ssize_t f = at + 3 + i;
        int32_t len = u->fl[f] ? u->fl[f] : (R16(lens, 2 * i) ? 0 : -1);
        if (img) set_val(img, ncols, (Py_ssize_t)no - 1, b + u->fp[f], len);
    }
    return 0;
}

/* The field of the supplemental header of the undo u (its KDO at field 3, whose op goes to
 * *op): -2 when u is not a table row's undo (11.1), -1 when the header is not there. */
static Py_ssize_t supp_field(const Rec *r, const Vec *u, unsigned *op) {
    const uint8_t *b = r->b;
    if (u->nf <= 3 || FLEN(u, 1) < SIZE_KTUB) return -2;
    if (b[u->fp[1] + AT_KTUB_opc_layer] != 11 || b[u->fp[1] + AT_KTUB_opc_code] != 1) return -2;
    unsigned slot;
    uint32_t bdba;
    Py_ssize_t at = kdo_at(r, u, 3, op, &bdba, &slot, NULL, 0);
    if (at < 0 || at >= u->nf || u->fl[at] != SIZE_SUPP) return -1;
    return at;
}

/* A strict walk's check: 1 when every supplemental column of the undo u (read by undo_of) is
 * a key column of t (else the attached database's miner adds the others to an update). */
static int supp_in_key(const Rec *r, const Vec *u, const Table *t) {
    const uint8_t *b = r->b;
    unsigned op;
    Py_ssize_t at = supp_field(r, u, &op);
    if (at == -2) return 1;
    if (at < 0) return 0;
    unsigned cc = u16(b, u->fp[at] + AT_SUPP_cc);
    if (!cc) return 1;
    if (at + 1 >= u->nf || u->fl[at + 1] != 2 * cc) return 0;
    const uint8_t *nums = b + u->fp[at + 1];
    for (unsigned i = 0; i < cc; i++) {
        Py_ssize_t no = (Py_ssize_t)u16(nums, 2 * i) - 1, k = 0;
        while (k < t->nkey && t->key[k] != no) k++;
        if (k == t->nkey) return 0;
    }
    return 1;
}

/* A strict walk's check: 1 when the undo u is a whole row's (engine/redo/pieces.py): its
 * supplemental data marks first and last, and the row a DRP's undo restores (an IRP) is a
 * whole piece (its Python twin: pieces.undo_whole). */
static int undo_whole(const Rec *r, const Vec *u) {
    const uint8_t *b = r->b;
    unsigned op;
    Py_ssize_t at = supp_field(r, u, &op);
    if (at == -2) return 1;
    if (at < 0) return 0;
    if ((b[u->fp[at] + AT_SUPP_fb] & (FB_F | FB_L)) != (FB_F | FB_L)) return 0;
    if (op == 2 && (b[u->fp[3] + AT_KDO_ROW_fb] & (FB_F | FB_L)) != (FB_F | FB_L)) return 0;
    return 1;
}

/* The row events of the KDO redo v (fields from 1, its KTB at 0): miner.Miner._rows.
 * Returns 0, DECLINE or FAIL. */
static int rows(Walker *w, const Rec *r, const Vec *v, const Vec *undo, PyObject *xid,
                const Head *h, PyObject *out, Py_ssize_t offset) {
    const uint8_t *b = r->b;
    unsigned op, slot;
    uint32_t bdba;
    /* the whole body must read as Python reads it, captured or not */
    Py_ssize_t nxt = kdo_at(r, v, 1, &op, &bdba, &slot, NULL, 0);
    if (nxt < 0 || nxt != v->nf) return DECLINE;
    if (op != 2 && op != 3 && op != 5 && op != 11 && op != 12) return DECLINE;
    uint32_t uobj = undo ? R32(b, undo->fp[1] + AT_KTUB_objn) : v->obj;
    const Table *t = find_table(w, uobj);
    if (!t) t = find_table(w, v->obj);
    if (!t || !t->captured) return 0;
    if (w->strict) { /* an attached database (oracle_fast.FastMiner): Python says what */
        if (op == 5 && undo && !supp_in_key(r, undo, t)) return DECLINE;
        if (t->con_id >= 0 && v->con_id != t->con_id) return 0; /* another container's */
        const uint8_t *k = b + v->fp[1];
        if (k[AT_KDO_flags] & (KDO_FLAG_ONE_FIELD | KDO_FLAG_COMPRESSED)) return DECLINE;
        if (op == 5 && (k[AT_KDO_URP_fb] & (FB_F | FB_L)) != (FB_F | FB_L))
            return DECLINE; /* an update of a row piece */
        if (undo && !undo_whole(r, undo)) return DECLINE; /* supplemental data in pieces */
    }
    /* a piece of a chained row, strict or not: the Python miner binds the pieces
     * (chain.Chains.insert_piece / change_piece; a row over a block is rare; its records go
     * through Python, which keeps the pending pieces): an insert's piece, an update's (its
     * row flags), a delete's (the row its undo restores, its supplemental flags) */
    if (op == 2 && (b[v->fp[1] + AT_KDO_ROW_fb] & (FB_F | FB_L)) != (FB_F | FB_L))
        return DECLINE;
    if (op == 5 && (b[v->fp[1] + AT_KDO_URP_fb] & (FB_F | FB_L)) != (FB_F | FB_L))
        return DECLINE;
    if ((op == 3 || op == 2) && undo && !undo_whole(r, undo)) return DECLINE;
    const uint8_t *ktb = b + v->fp[0];
    PyObject *ref;
    uint32_t udba = R32(ktb, AT_KTB_uba_dba);
    if (udba) {
        ref = dotted(udba, R16(ktb, AT_KTB_uba_seq), ktb[AT_KTB_uba_rec], 16);
    } else {
        char buf[48], *q = put_num(buf, (unsigned long long)offset, 10);
        *q++ = ':';
        ref = ascii(buf, put_num(q, v->seq, 10) - buf);
    }
    if (!ref) return FAIL;
    int rc = DECLINE;
    Py_ssize_t n = t->ncols;
    Val *after = w->img[0], *before = w->img[1], *merged = w->img[2], *key = w->img[3];
    Val *scratch = w->img[4];
    kdo_at(r, v, 1, &op, &bdba, &slot, after, n);
    if (op == 2) { /* IRP */
        rc = emit_row(w, out, t, xid, IO_INSERT, bdba, slot, after, 1, NULL, ref, h);
        goto done;
    }
    if (op == 11) { /* QMI */
        const uint8_t *slots = b + v->fp[2];
        unsigned nrow = v->fl[2] / 2;
        for (unsigned i = 0; i < nrow; i++) {
            array_rows(b + v->fp[3], v->fl[3], nrow, i, scratch, n);
            rc = emit_row(w, out, t, xid, IO_INSERT, bdba, R16(slots, 2 * i), scratch, 1, NULL,
                          ref, h);
            if (rc) goto done;
        }
        goto done;
    }
    if (op == 3) { /* DRP */
        if (undo && undo_of(r, undo, before, n, NULL, NULL, NULL) < 0) goto done;
        if (!undo) memset(before, 0, sizeof(Val) * (size_t)n);
        key_of(t, before, key, n);
        rc = t->full_deletes
                 ? emit_row(w, out, t, xid, IO_DELETE, bdba, slot, before, 1, NULL, ref, h)
                 : emit_row(w, out, t, xid, IO_DELETE, bdba, slot, key, 0, NULL, ref, h);
        goto done;
    }
    if (op == 12) { /* QMD: the undo's QMI rows are the before images */
        pos_t qmi = -1;
        unsigned nqmi = 0;
        Py_ssize_t qlen = 0;
        if (undo && undo_of(r, undo, NULL, 0, &qmi, &nqmi, &qlen) < 0) goto done;
        const uint8_t *slots = b + v->fp[2];
        unsigned nslots = v->fl[2] / 2;
        for (unsigned i = 0; i < nslots; i++) {
            if (qmi >= 0 && i < nqmi) array_rows(b + qmi, qlen, nqmi, i, before, n);
            else memset(before, 0, sizeof(Val) * (size_t)n);
            key_of(t, before, key, n);
            int full = t->full_deletes;
            rc = emit_row(w, out, t, xid, IO_DELETE, bdba, R16(slots, 2 * i), full ? before : key,
                          full, NULL, ref, h);
            if (rc) goto done;
        }
        rc = 0;
        goto done;
    }
    /* URP */
    if (undo && undo_of(r, undo, before, n, NULL, NULL, NULL) < 0) goto done;
    if (!undo) memset(before, 0, sizeof(Val) * (size_t)n);
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
        if (!merged[t->key[k]].present) /* no key in the redo: miner.py marks it */
            goto done;
    /* the images by the table's befores: decode.Decoder._update */
    if (changed) { /* under UPDATERECORDFORMAT: GGSUnifiedPKUpdate */
        if (t->befores == B_NONE) key_of(t, before, key, n);
        int unified = t->befores == B_FULL || t->befores == B_COMPACT;
        rc = emit_row(w, out, t, xid, unified ? IO_UNIFIED_PK : IO_KEYFIELDCOMP, bdba, slot,
                      merged, 0, t->befores == B_NONE ? key : before, ref, h);
    } else if (t->befores == B_RECORD) {
        rc = emit_row(w, out, t, xid, IO_BEFORE_FIELDCOMP, bdba, slot, before, 0, NULL, ref, h);
        if (!rc) rc = emit_row(w, out, t, xid, IO_FIELDCOMP, bdba, slot, merged, 0, NULL, ref, h);
    } else if (t->befores == B_FULL || t->befores == B_COMPACT) {
        rc = emit_row(w, out, t, xid, IO_UNIFIED, bdba, slot,
                      t->befores == B_FULL ? merged : after, 0, before, ref, h);
    } else {
        rc = emit_row(w, out, t, xid, IO_FIELDCOMP, bdba, slot, merged, 0, NULL, ref, h);
    }
done:
    Py_DECREF(ref);
    return rc;
}

static PyObject *text_of(const uint8_t *b, const Vec *v, Py_ssize_t i) {
    return PyUnicode_DecodeUTF8((const char *)b + v->fp[i], v->fl[i], "replace");
}

/* "<prefix><offset>": a change's reference where it has no undo address. */
static PyObject *ref_at(const char *prefix, Py_ssize_t offset) {
    char buf[48], *q = buf;
    while (*prefix) *q++ = *prefix++;
    return ascii(buf, put_num(q, (unsigned long long)offset, 10) - buf);
}

/* A 19.1 direct-path load (payloads._direct_back, miner.Miner._direct): a data block image,
 * its rows by the row directory; the loader's xid (ITL 1) into *xid (borrowed), and for a
 * captured table an insert of each row. Returns 0, DECLINE or FAIL. */
static int direct(Walker *w, const Rec *r, const Vec *v, const Head *h, PyObject *out,
                  Py_ssize_t offset, PyObject **xid) {
    Py_ssize_t blen = FLEN(v, 0);
    if (blen < AT_KTBBH_bdba + 4) return DECLINE;
    const uint8_t *blk = r->b + v->fp[0];
    unsigned itc = blk[AT_KTBBH_itc];
    Py_ssize_t kdbh = SIZE_KTBBH_ITL + SIZE_KTBBH_ITL * (Py_ssize_t)itc;
    unsigned usn = 0, slt = 0;
    uint32_t sqn = 0;
    if (itc) {
        if (SIZE_KTBBH_ITL + AT_KTBBH_ITL_sqn + 4 > blen) return DECLINE;
        usn = R16(blk, SIZE_KTBBH_ITL + AT_KTBBH_ITL_usn);
        slt = R16(blk, SIZE_KTBBH_ITL + AT_KTBBH_ITL_slt);
        sqn = R32(blk, SIZE_KTBBH_ITL + AT_KTBBH_ITL_sqn);
    }
    if (kdbh + AT_KDBH_nrow + 2 > blen) return DECLINE;
    unsigned nrow = R16(blk, kdbh + AT_KDBH_nrow);
    Py_ssize_t rd = kdbh + KDBH_DIRECTORY + 4; /* one table's directory entry */
    if (rd + 2 * (Py_ssize_t)nrow > blen) return DECLINE;
    *xid = xid_text(w, usn, slt, sqn);
    if (!*xid) return FAIL;
    uint32_t objd = R32(blk, AT_KTBBH_objd);
    const Table *t = find_table(w, objd);
    if (t && !t->captured) t = NULL;
    uint32_t dba = v->dba ? v->dba : R32(blk, AT_KTBBH_bdba);
    PyObject *ref = NULL;
    int rc = 0;
    for (unsigned slot = 0; slot < nrow && !rc; slot++) {
        unsigned off = R16(blk, rd + 2 * slot);
        if (off == 0xFFFF) continue;
        Py_ssize_t p = kdbh + off;
        Val *row = t ? w->img[4] : NULL;
        if (one_row(blk + p, blen - p, row, t ? t->ncols : 0) < 0) {
            rc = DECLINE;
            break;
        }
        if (!t) continue;
        if (!ref && !(ref = ref_at("dl:", offset))) {
            rc = FAIL;
            break;
        }
        rc = emit_row(w, out, t, *xid, IO_INSERT, dba, slot, row, 1, NULL, ref, h);
    }
    Py_XDECREF(ref);
    return rc;
}

/* A 24.1 DDL (payloads._ddl_back, miner.Miner._ddl): the DDL event, or with GETTRUNCATES a
 * TRUNCATE of a table that has it as a purge of its rows; its xid into *xid (borrowed). */
static int ddl(Walker *w, const Rec *r, const Vec *v, const Head *h, PyObject *out,
               Py_ssize_t offset, PyObject **xid) {
    if (v->nf < 5 || FLEN(v, 0) < SIZE_DDL) return DECLINE;
    const uint8_t *f = r->b + v->fp[0];
    *xid = xid_text(w, R16(f, AT_DDL_usn), R16(f, AT_DDL_slt), R32(f, AT_DDL_sqn));
    if (!*xid) return FAIL;
    const Table *t = find_table(w, R32(f, AT_DDL_obj));
    PyObject *owner = text_of(r->b, v, 1), *name = text_of(r->b, v, 2);
    PyObject *text = text_of(r->b, v, 3), *words = NULL, *upper = NULL, *table = NULL;
    PyObject *ref = NULL, *parts = NULL;
    int rc = FAIL;
    if (!owner || !name || !text) goto done;
    words = PyUnicode_Split(text, NULL, 2); /* text.split(): at least two words? */
    if (!words) goto done;
    int truncate = 0;
    if (PyList_GET_SIZE(words) >= 2) {
        upper = PyObject_CallMethod(PyList_GET_ITEM(words, 0), "upper", NULL);
        if (!upper) goto done;
        truncate = PyUnicode_CompareWithASCIIString(upper, "TRUNCATE") == 0;
    }
    if (truncate && t && t->truncates) {
        ref = ref_at("ddl:", offset);
        if (!ref) goto done;
        parts = t->hooked ? Py_NewRef(w->empty_bytes)
                          : PyTuple_Pack(4, t->name, w->empty_bytes, w->empty_bytes, Py_None);
        if (!parts) goto done;
        rc = emit(w, out, w->kind[K_ROW], *xid, h, w->io[IO_PURGEDATA], t->qualified, Py_None,
                  ref, w->empty_str, w->empty_str, parts);
    } else {
        table = PyUnicode_FromFormat("%U.%U", owner, name);
        if (!table) goto done;
        rc = emit_text(w, out, w->kind[K_DDL], *xid, h, w->zero, table, Py_None, w->empty_str,
                       w->empty_str, w->empty_str, text, w->empty_bytes);
    }
done:
    Py_XDECREF(owner);
    Py_XDECREF(name);
    Py_XDECREF(text);
    Py_XDECREF(words);
    Py_XDECREF(upper);
    Py_XDECREF(table);
    Py_XDECREF(ref);
    Py_XDECREF(parts);
    return rc;
}

/* One Oracle record: miner.Miner.record. Returns 0, DECLINE or FAIL. */
static int record(Walker *w, const uint8_t *b, pos_t hi, pos_t hs, int big, Py_ssize_t offset,
                  Py_ssize_t stop, PyObject *thread, PyObject *lwn_scn, PyObject *micros,
                  PyObject *out) {
    Rec rr = {b, hi, big};
    const Rec *r = &rr;
    NEED(r, 0, SIZE_RECORD_HEADER);
    unsigned vld = b[AT_RECORD_HEADER_vld];
    pos_t p = vld & VLD_LWN ? SIZE_LWN_HEADER : SIZE_RECORD_HEADER;
    if (p > hi) return DECLINE;
    Head h = {thread, NULL, NULL, NULL, NULL, micros};
    Head hc; /* a commit's: the LWN's SCN */
    int rc = DECLINE;
    PyObject *session_user = NULL, *session_name = NULL;
    h.offset = PyLong_FromSsize_t(offset);
    h.stop = PyLong_FromSsize_t(stop);
    h.scn = PyLong_FromUnsignedLongLong((uint64_t)R32(b, AT_RECORD_HEADER_scn) |
                                        (uint64_t)R16(b, AT_RECORD_HEADER_scn_wrap) << 32);
    h.subscn = PyLong_FromUnsignedLong(R16(b, AT_RECORD_HEADER_subscn));
    PyObject *xid = NULL; /* borrowed from the cache or owned in xid_own */
    PyObject *xid_own = NULL;
    if (!h.offset || !h.stop || !h.scn || !h.subscn) {
        rc = FAIL;
        goto done;
    }
    hc = h;
    hc.scn = lwn_scn;
    Vec *v = &w->vec[0], *undo = NULL;
    pos_t undo_at = -1;
    while (p < hi) {
        pos_t nxt = vector_at(r, p, hs, v);
        if (nxt < 0) goto decline;
        unsigned layer = v->layer, code = v->code;
        if (layer == 5 && code == 1) {
            if (undo_of(r, v, NULL, 0, NULL, NULL, NULL) < 0) goto decline;
            PyObject *x = xid_of(w, r, b + v->fp[0] + AT_KTUDB_usn);
            if (!x) goto fail;
            Py_INCREF(x);
            Py_XSETREF(xid_own, x);
            xid = x;
            /* keep it: the next vectors go in the other buffer */
            undo_at = p;
            undo = v;
            v = &w->vec[v == &w->vec[0] ? 1 : 0];
        } else if (layer == 11 &&
                   (code == 19 || code == 4 || code == 6 || code == 8 || code == 16)) {
            /* 19: vectors.UNDECODED_ROW_OPS, Python stops; 4 LKR, 6 ORP, 8 CFA, 16 LMN:
             * only ever pieces of a row change in pieces (a chained row's update may start
             * with its head locked; a migrated or re-chained row), which Python binds
             * (rowpieces.py, miner.Miner._in_pieces) */
            const Table *t = find_table(w, v->obj);
            if (t && t->captured) goto decline;
        } else if (layer == 11 && (code == 2 || code == 3 || code == 5 || code == 11 ||
                                   code == 12)) {
            if (!ktb_ok(r, v, 0)) goto decline;
            const uint8_t *ktb = b + v->fp[0];
            static const uint8_t zero[8] = {0};
            if ((ktb[AT_KTB_op] & 0x0F) == 1 && memcmp(ktb + AT_KTB_usn, zero, 8)) {
                PyObject *x = xid_of(w, r, ktb + AT_KTB_usn);
                if (!x) goto fail;
                Py_INCREF(x);
                Py_XSETREF(xid_own, x);
                xid = x;
            } else if (!xid) {
                Py_ssize_t k = 0;
                unsigned op, slot;
                uint32_t bdba;
                k = kdo_at(r, v, 1, &op, &bdba, &slot, NULL, 0);
                if (k < 0 || k != v->nf) goto decline;
                p = nxt;
                continue;
            }
            int e = rows(w, r, v, undo, xid, &h, out, offset);
            if (e == FAIL) goto fail;
            if (e) goto decline;
        } else if (layer == 5 && code == 2) {
            if (FLEN(v, 0) < SIZE_KTUDH) goto decline;
            const uint8_t *f = b + v->fp[0];
            PyObject *x = dotted(usn_of(v->cls), R16(f, AT_KTUDH_slt), R32(f, AT_KTUDH_sqn), 10);
            if (!x) goto fail;
            Py_XSETREF(xid_own, x);
            xid = x;
            if (emit(w, out, w->kind[K_BEGIN], xid, &h, w->zero, w->empty_str, Py_None,
                     w->empty_str, w->empty_str, w->empty_str, w->empty_bytes) < 0)
                goto fail;
        } else if (layer == 5 && code == 4) {
            if (FLEN(v, 0) < AT_KTUCM_flg + 1 || FLEN(v, 1) < SIZE_KTUCF) goto decline;
            const uint8_t *f = b + v->fp[0];
            PyObject *cx = dotted(usn_of(v->cls), R16(f, AT_KTUCM_slt), R32(f, AT_KTUCM_sqn), 10);
            if (!cx) goto fail;
            int e = emit(w, out, w->kind[f[AT_KTUCM_flg] & KTUCM_ROLLBACK ? K_ROLLBACK : K_COMMIT],
                         cx, &hc, w->zero, w->empty_str, Py_None, w->empty_str, w->empty_str,
                         w->empty_str, w->empty_bytes);
            Py_DECREF(cx);
            if (e < 0) goto fail;
        } else if (layer == 5 && (code == 6 || code == 11)) {
            if (w->strict) goto decline; /* an attached database's: its redo miner's */
            if (FLEN(v, 1) < AT_UNDO_APPLIED_uba_rec + 1) goto decline;
            const uint8_t *f = b + v->fp[1];
            PyObject *ux = xid_of(w, r, f + AT_UNDO_APPLIED_usn);
            PyObject *ref = dotted(R32(f, AT_UNDO_APPLIED_uba_dba), R16(f, AT_UNDO_APPLIED_uba_seq),
                                   f[AT_UNDO_APPLIED_uba_rec], 16);
            int e = ux && ref ? emit(w, out, w->kind[K_UNDO], ux, &h, w->zero, w->empty_str,
                                     Py_None, ref, w->empty_str, w->empty_str, w->empty_bytes)
                              : FAIL;
            Py_XDECREF(ref);
            if (e < 0) goto fail;
        } else if (layer == 5 && code == 20) {
            if (v->nf < SESSION_FIELDS || v->fl[0] < 8 || v->fl[3] < 4 || v->fl[4] < 8)
                goto decline;
            PyObject *user = text_of(b, v, 7), *name = text_of(b, v, 1);
            PyObject *client = text_of(b, v, 5);
            if (!user || !name || !client) {
                Py_XDECREF(user);
                Py_XDECREF(name);
                Py_XDECREF(client);
                goto fail;
            }
            Py_DECREF(client);
            Py_XSETREF(session_user, user);
            Py_XSETREF(session_name, name);
        } else if ((layer == 19 || layer == 24) && code == 1) { /* a direct load, DDL */
            if (w->strict) goto decline; /* an attached database's: its redo miner's (a stop) */
            PyObject *x = NULL;
            int e = layer == 19 ? direct(w, r, v, &h, out, offset, &x)
                                : ddl(w, r, v, &h, out, offset, &x);
            if (x) {
                Py_INCREF(x);
                Py_XSETREF(xid_own, x);
                xid = x;
            }
            if (e == FAIL) goto fail;
            if (e) goto decline;
        }
        p = nxt;
    }
    (void)undo_at;
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
    Py_XDECREF(session_user);
    Py_XDECREF(session_name);
    Py_XDECREF(h.offset);
    Py_XDECREF(h.stop);
    Py_XDECREF(h.scn);
    Py_XDECREF(h.subscn);
    return rc;
}

/* ---- the walk of one LWN's records (engine/redo/scan.Scan.walk, _in_lwn) ------------- */
/* walk(buf, pos, hi, base, first_block, block_size, start, end, lwn_scn, micros, thread,
 *      vector_header_size, big_endian, out) -> (pos, records, stop of the last or -1, state):
 * state 0 the LWN ends, 1 the record at pos is left to Python, 2 a record at or after end. */
static PyObject *walker_walk(Walker *w, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 14) {
        PyErr_SetString(PyExc_TypeError, "walk(buf, pos, hi, base, first_block, block_size, "
                                         "start, end, lwn_scn, micros, thread, hs, big, out)");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    Py_ssize_t hi = PyLong_AsSsize_t(args[2]);
    Py_ssize_t base = PyLong_AsSsize_t(args[3]);
    Py_ssize_t first_block = PyLong_AsSsize_t(args[4]);
    Py_ssize_t bs = PyLong_AsSsize_t(args[5]);
    Py_ssize_t start = PyLong_AsSsize_t(args[6]);
    Py_ssize_t end = PyLong_AsSsize_t(args[7]);
    PyObject *lwn_scn = args[8], *micros = args[9], *thread = args[10];
    Py_ssize_t hs = PyLong_AsSsize_t(args[11]);
    int big = PyObject_IsTrue(args[12]);
    PyObject *out = args[13];
    if (big < 0 || PyErr_Occurred()) return NULL;
    if (!PyList_Check(out) || bs <= 16 || (hs != SIZE_VECTOR_HEADER_11G &&
                                           hs != SIZE_VECTOR_HEADER_12C)) {
        PyErr_SetString(PyExc_ValueError, "walk: bad arguments");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    const uint8_t *B = view.buf;
    if (hi > view.len) hi = view.len;
    Py_ssize_t payload = bs - 16, records = 0, last = -1;
    int state = 0;
    while (hi - pos >= SIZE_RECORD_HEADER) {
        uint32_t size = g32(big, B, pos);
        if (size == 0 || (Py_ssize_t)size > hi - pos) break;
        if (size < SIZE_RECORD_HEADER || (pos != base && B[pos + AT_RECORD_HEADER_vld] & VLD_LWN)) {
            state = 1;
            break;
        }
        Py_ssize_t offset = (first_block + pos / payload) * bs + 16 + pos % payload;
        if (end >= 0 && offset >= end) {
            state = 2;
            break;
        }
        Py_ssize_t nxt = pos + (Py_ssize_t)size;
        Py_ssize_t stop = (first_block + nxt / payload) * bs + 16 + nxt % payload;
        if (offset >= start) {
            Py_ssize_t mark = PyList_GET_SIZE(out);
            int rc = record(w, B + pos, (pos_t)size, hs, big, offset, stop, thread, lwn_scn, micros,
                            out);
            if (rc == FAIL) {
                PyBuffer_Release(&view);
                return NULL;
            }
            if (rc == DECLINE) {
                if (PyList_SetSlice(out, mark, PyList_GET_SIZE(out), NULL) < 0) {
                    PyBuffer_Release(&view);
                    return NULL;
                }
                state = 1;
                break;
            }
            records++;
            last = stop;
        }
        pos = nxt;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("nnni", pos, records, last, state);
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
static inline uint32_t ora_u32(const uint8_t *b, pos_t p, int big) { return g32(big, b, p); }
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
    for (int i = 0; i < 2; i++) {
        PyMem_Free(w->vec[i].fp);
        PyMem_Free(w->vec[i].fl);
        w->vec[i].fp = NULL;
        w->vec[i].fl = NULL;
    }
    w->tables = NULL;
    w->slots = NULL;
    w->ntables = 0;
}

static void walker_dealloc(Walker *w) {
    free_tables(w);
    for (int i = 0; i < NKIND; i++) Py_XDECREF(w->kind[i]);
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
    long con_id = -1;
    if (!PyArg_ParseTuple(spec, "UOkSOppO!i|l", &qualified, &name, &dataobj, &kinds, &key,
                          &captured, &hooked, &PyTuple_Type, &entries, &befores, &con_id))
        return -1;
    t->con_id = con_id;
    t->strict = PyTuple_GET_SIZE(spec) > 9;
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
    t->truncates = (befores & 32) != 0;
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
 * column indices, captured, hooked, entry converters, befores: decode.BEFORES_* | 16 with
 * NOCOMPRESSDELETES | 32 with GETTRUNCATES[, container id: an attached database's table,
 * which makes the walk strict, rows()]); kinds are the event kinds ROW, BEGIN, COMMIT,
 * ROLLBACK, SESSION, UNDO, DDL; io_types INSERT, DELETE, FIELDCOMP, KEYFIELDCOMP, a
 * FIELDCOMP's before image, GGSUnifiedUpdate, GGSUnifiedPKUpdate, PURGEDATA. */
static int walker_init(Walker *w, PyObject *args, PyObject *kw) {
    PyObject *tables, *kinds, *io;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyDict_Type, &tables, &PyTuple_Type, &kinds,
                          &PyTuple_Type, &io))
        return -1;
    if (PyTuple_GET_SIZE(kinds) != NKIND || PyTuple_GET_SIZE(io) != NIO) {
        PyErr_SetString(PyExc_ValueError, "7 event kinds and 8 IO types");
        return -1;
    }
    free_tables(w);
    for (int i = 0; i < NKIND; i++)
        Py_XSETREF(w->kind[i], Py_NewRef(PyTuple_GET_ITEM(kinds, i)));
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
        if (t->strict) w->strict = 1;
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
    for (int i = 0; i < 2; i++) {
        w->vec[i].fp = PyMem_Malloc(sizeof(pos_t) * (MAX_FIELDS + 1));
        w->vec[i].fl = PyMem_Malloc(sizeof(uint16_t) * (MAX_FIELDS + 1));
        if (!w->vec[i].fp || !w->vec[i].fl) return -1;
    }
    return 0;
}

static PyMethodDef walker_methods[] = {
    {"walk", (PyCFunction)(void (*)(void))walker_walk, METH_FASTCALL,
     "walk(buf, pos, hi, base, first_block, block_size, start, end, lwn_scn, micros, thread, "
     "vector_header_size, big_endian, out) -> (pos, records, last stop, state)"},
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
