/*
 * redopack: the workload fast path's row-change kernel in C. engine/embedded/redopack.py is
 * its reference and its fallback: the same classes, methods and bytes (held equal by
 * tests/source/test_source_redopack.py).
 *
 * Table(pack, kinds, encoders).insert/update/delete take one single-row change and do all
 * of its per-row work in one call: they encode the column values that come from SQLite
 * (NUMBER from int and float, DATE from its ISO text, the character types as UTF-8; any
 * other value goes to the column's Python encoder), take the undo record addresses
 * (advancing the transaction's TxnIds as TxnIds.next_rec does), choose each block's redo
 * KTB (a transaction's first change in a block carries the cleanout of the ITL entries
 * that commits left, popped from the database's dirty map), pack the change vectors as
 * engine/embedded/bulkpack.py does and frame the records as LogWriter.add_native does
 * (record head with the RBA where the record lands, length, CRC-32). commit() packs the
 * 5.4 that ends a transaction. The framed records are the in-memory form LogWriter turns into
 * Oracle's change vectors and blocks (engine/embedded/logfile.py, engine/redo/payloads.py).
 *
 * Layouts: docs/redo_format.md; the PACK formats below are the structs of
 * engine/embedded/redo_codec.py (LAYOUT), little-endian ('c' and 'q' written as B and Q).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "crc32.h"
#include <stdint.h>
#include <string.h>

#define BLOCK 512
#define BLOCK_HEAD 16
#define PAYLOAD (BLOCK - BLOCK_HEAD)
#define FRAME 8     /* length u32, CRC-32 u32 */
#define REC_HEAD 38 /* REC_HEAD without LWN */
#define OBJ_UNDO 0xFFFFFFFFu
#define UNDO_BLOCKS ((3u << 22) | 0x100u) /* usn u's undo block of sequence s: + u*0x100 + s%256 */
#define NULL_LEN (-1)
#define MAX_NUMBER_DIGITS 20 /* base-100 digits */
#define MIN_EXP (-65)
#define MAX_EXP 62
#define NEG_TERMINATOR 0x66
#define LOCAL_VALUES 32
#define NO_SCN UINT64_MAX /* a KTB's cleanout SCN when it has no cleanout (-1) */

/* redo_codec's structs */
#define CV_HEAD "BBBBHHIIQHB" /* layer code typ marker cls afn dba obj scn seq body-tag */
#define UNDO "HHIIIHHHHHHBIB" /* op layer, code, obj, dataobj, slot, rci, tsn siz spc, flg,
                                 useq, urec, logon user, bits */
#define XID "HHI"
#define UBA "IHH"
#define KDO "IIHHBBHBHH" /* dba, header dba, slot, 0x2C, itl, lock, size, lb, cc, nnew */
#define IDX "BHHHIIB"
#define KTB "BBHHIIHHBHQQ" /* op, kind, xid, uba, lkc, cleanouts, itl scn, cleanout scn */
#define SLOT "HIHHH"
#define COMMIT "HIHHHHHH"
#define REC "HBBIIHIQHQH" /* REC_HEAD */
#define ENTRY "HHQ"       /* a cleanout entry */
#define ITL_FLAGS "C---"
#define FLAGS "--H-FL--"

enum { K_NUMBER = 'N', K_DATE = 'D', K_TEXT = 'T' };
enum { OP_INSERT, OP_UPDATE, OP_DELETE };

static PyObject *StructError; /* struct.error: what the Python twin raises for a field too big */
static PyObject *s_rec, *s_undo_seq, *s_started, *s_blocks, *s_last_uba;
static PyObject *s_obj, *s_dataobj, *s_afn, *s_hdba, *s_ncols, *s_key_col, *s_index;

/* ---- output ----------------------------------------------------------------------------------- */
typedef unsigned char u8;

/* A growing byte buffer; writers ask for room (need) and then write without checks. */
typedef struct {
    u8 *p;
    size_t n, cap;
    u8 local[4096];
} Buf;

static void buf_init(Buf *b) {
    b->p = b->local;
    b->n = 0;
    b->cap = sizeof b->local;
}

static void buf_free(Buf *b) {
    if (b->p != b->local) PyMem_Free(b->p);
}

/* Where ``extra`` more bytes go (NULL: MemoryError set). */
static u8 *need(Buf *b, size_t extra) {
    if (b->n + extra > b->cap) {
        size_t cap = b->cap * 2 > b->n + extra ? b->cap * 2 : b->n + extra + 4096;
        u8 *q = PyMem_Malloc(cap);
        if (q == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        memcpy(q, b->p, b->n);
        buf_free(b);
        b->p = q;
        b->cap = cap;
    }
    return b->p + b->n;
}

static void done(Buf *b, const u8 *q) { b->n = (size_t)(q - b->p); }

static u8 *put16(u8 *q, uint64_t v) {
    q[0] = (u8)v;
    q[1] = (u8)(v >> 8);
    return q + 2;
}
static u8 *put32(u8 *q, uint64_t v) {
    q[0] = (u8)v;
    q[1] = (u8)(v >> 8);
    q[2] = (u8)(v >> 16);
    q[3] = (u8)(v >> 24);
    return q + 4;
}
static u8 *putn(u8 *q, const void *s, size_t n) {
    if (n) memcpy(q, s, n);
    return q + n;
}

/* The fields ``v`` packed little-endian by a struct format of B, H, I and Q. */
static u8 *pack(u8 *q, const char *fmt, const uint64_t *v) {
    for (; *fmt; fmt++, v++) switch (*fmt) {
        case 'B': *q++ = (u8)*v; break;
        case 'H': q = put16(q, *v); break;
        case 'I': q = put32(q, *v); break;
        default: q = put32(put32(q, *v), *v >> 32); break; /* Q */
        }
    return q;
}
#define PACK(q, fmt, ...) pack((q), (fmt), (const uint64_t[]){__VA_ARGS__})

/* A codec ``str`` field: u32 length + the text. */
static u8 *text(u8 *q, const char *s) {
    size_t n = strlen(s);
    return putn(put32(q, n), s, n);
}

/* ---- column values ---------------------------------------------------------------------------- */
typedef struct {
    const u8 *p;
    Py_ssize_t n;  /* NULL_LEN: NULL */
    PyObject *ref; /* a bytes object made by a Python encoder (owned) */
    u8 small[24];  /* a NUMBER (at most 22 bytes) or a DATE (7) encoded here */
} Val;

static int decimal(unsigned long long m, char *out) { /* m's digits, none for 0 */
    char rev[24];
    int n = 0;
    for (; m; m /= 10) rev[n++] = (char)('0' + m % 10);
    for (int i = 0; i < n; i++) out[i] = rev[n - 1 - i];
    return n;
}

/* (-1)**neg * digits * 100**-scale as codecs.encode_scaled packs it (``digits``: decimal, no
   leading zeros, none for zero) into v; 0 when out of encode_scaled's own range (the
   Python encoder then has it). */
static int number_digits(const char *digits, int len, int neg, int scale, Val *v) {
    char d[48];
    int n = 0;
    u8 *out = v->small;
    if (len == 0) {
        out[0] = 0x80;
        return (int)(v->n = 1);
    }
    if (len & 1) d[n++] = '0';
    memcpy(d + n, digits, (size_t)len);
    n += len;
    int exp = n / 2 - 1 - scale;
    while (d[n - 1] == '0') n--;
    if (n & 1) d[n++] = '0';
    int pairs = n / 2;
    if (pairs > MAX_NUMBER_DIGITS || exp < MIN_EXP || exp > MAX_EXP) return 0;
    out[0] = (u8)(neg ? 0x3E - exp : 0xC1 + exp);
    for (int i = 0; i < pairs; i++) {
        int pair = (d[2 * i] - '0') * 10 + (d[2 * i + 1] - '0');
        out[1 + i] = (u8)(neg ? 101 - pair : pair + 1);
    }
    v->n = pairs + 1;
    if (neg && pairs < MAX_NUMBER_DIGITS) out[v->n++] = NEG_TERMINATOR;
    return 1;
}

/* A float as stored_number encodes it (from repr), without formatting repr (dtoa is slow):
   when x is a decimal n * 10**-k of at most 15 significant digits, repr(x) shows that
   decimal, since decimals of at most 15 digits map to distinct doubles (DBL_DIG) and so
   no shorter string reads back as x. 1: encoded; 0: the Python encoder's (more digits,
   repr's exponent forms, NaN, infinities). */
static int float_value(double x, Val *v) {
    static const double p10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,
                                 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17};
    double a = x < 0 ? -x : x;
    if (x == 0) return number_digits("", 0, 0, 0, v); /* 0.0, -0.0: int('0'), int('-0') */
    if (!(a < 1e15) || a < 1e-4) return 0;
    for (int k = 0; k < (int)(sizeof p10 / sizeof p10[0]); k++) {
        double m = a * p10[k];
        if (m >= 1e15) return 0;
        long long n = (long long)(m + 0.5);
        if ((double)n / p10[k] != a) continue;
        char digits[24];
        int len = decimal((unsigned long long)n, digits);
        if (len - k <= -4) return 0; /* repr's exponent form */
        if (k & 1) digits[len++] = '0'; /* whole base-100 digits after the point */
        return number_digits(digits, len, x < 0, (k + 1) / 2, v);
    }
    return 0;
}

/* A NUMBER from SQLite (stored_number): 1 encoded, 0 the Python encoder's, -1 error. */
static int number_value(PyObject *o, Val *v) {
    if (PyLong_CheckExact(o)) {
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (x == -1 && PyErr_Occurred()) return -1;
        if (overflow) return 0;
        char digits[24];
        int len = decimal(x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x, digits);
        return number_digits(digits, len, x < 0, 0, v);
    }
    if (PyFloat_CheckExact(o)) return float_value(PyFloat_AS_DOUBLE(o), v);
    return 0;
}

static int days_in(int year, int month) {
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month == 2 && year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) return 29;
    return days[month - 1];
}

/* A DATE from its ISO text 'YYYY-MM-DD HH:MM:SS' (stored_date): 1, 0 (Python's), -1. */
static int date_value(PyObject *o, Val *v) {
    static const char shape[] = "0000-00-00 00:00:00";
    if (!PyUnicode_CheckExact(o) || !PyUnicode_IS_ASCII(o) || PyUnicode_GET_LENGTH(o) != 19)
        return 0;
    const char *s = (const char *)PyUnicode_DATA(o);
    int f[6] = {0}, k = 0;
    for (int i = 0; i < 19; i++) {
        if (shape[i] != '0') {
            if (s[i] != shape[i]) return 0;
            k++;
        } else if (s[i] < '0' || s[i] > '9') {
            return 0;
        } else {
            f[k] = f[k] * 10 + (s[i] - '0');
        }
    }
    if (f[0] < 1 || f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > days_in(f[0], f[1]) ||
        f[3] > 23 || f[4] > 59 || f[5] > 59)
        return 0; /* the Python encoder says what is wrong */
    u8 *q = v->small;
    *q++ = (u8)(f[0] / 100 + 100);
    *q++ = (u8)(f[0] % 100 + 100);
    for (int i = 1; i < 6; i++) *q++ = (u8)(f[i] + (i >= 3)); /* month, day, hh+1, mi+1, ss+1 */
    v->n = 7;
    return 1;
}

/* VARCHAR2, CHAR, ... (stored_text): 1, 0 (Python's), -1. The bytes are the string's own
   UTF-8, kept by the string (which the caller's row holds). */
static int text_value(PyObject *o, Val *v) {
    if (!PyUnicode_CheckExact(o)) return 0;
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(o, &n);
    if (s == NULL) return -1;
    v->p = (const u8 *)s;
    v->n = n ? n : NULL_LEN; /* '' is NULL */
    return 1;
}

/* One value from SQLite: encoded here by its column's kind, else by its Python encoder. */
static int value_of(PyObject *o, int kind, PyObject *encoder, Val *v) {
    v->ref = NULL;
    v->p = v->small;
    if (o == Py_None) {
        v->n = NULL_LEN;
        return 0;
    }
    int r = kind == K_NUMBER ? number_value(o, v) : kind == K_DATE ? date_value(o, v)
                                                                   : text_value(o, v);
    if (r) return r < 0 ? -1 : 0;
    PyObject *raw = PyObject_CallOneArg(encoder, o);
    if (raw == NULL) return -1;
    if (raw == Py_None) {
        Py_DECREF(raw);
        v->n = NULL_LEN;
        return 0;
    }
    if (!PyBytes_Check(raw)) {
        PyErr_Format(PyExc_TypeError, "an encoder returned %.80s", Py_TYPE(raw)->tp_name);
        Py_DECREF(raw);
        return -1;
    }
    v->ref = raw;
    v->p = (const u8 *)PyBytes_AS_STRING(raw);
    v->n = PyBytes_GET_SIZE(raw);
    return 0;
}

static size_t len_of(const Val *v) { return v->n > 0 ? (size_t)v->n : 0; }

/* A column head (u16 number, i32 length, -1 for NULL) and the value. */
static u8 *put_col(u8 *q, unsigned no, const Val *v) {
    q = put32(put16(q, no), (uint32_t)v->n);
    return putn(q, v->p, len_of(v));
}

/* ---- integers from Python --------------------------------------------------------------------- */
static int as_u64(PyObject *o, uint64_t max, uint64_t *out) {
    int overflow;
    long long small = PyLong_AsLongLongAndOverflow(o, &overflow); /* the quick way */
    if (small == -1 && PyErr_Occurred()) return -1;
    if (!overflow && small >= 0 && (uint64_t)small <= max) {
        *out = (uint64_t)small;
        return 0;
    }
    unsigned long long v = overflow > 0 ? PyLong_AsUnsignedLongLong(o) : 0;
    if (v == (unsigned long long)-1 && PyErr_Occurred()) PyErr_Clear();
    else if (overflow > 0 && v <= max) {
        *out = v;
        return 0;
    }
    PyErr_SetString(StructError, "argument out of range");
    return -1;
}

static int item_u64(PyObject *tuple, Py_ssize_t i, uint64_t max, uint64_t *out) {
    return as_u64(PyTuple_GET_ITEM(tuple, i), max, out);
}

static int as_i64(PyObject *o, uint64_t *out) {
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    *out = (uint64_t)v;
    return 0;
}

/* ---- the transaction ------------------------------------------------------------------------ */
/* What the kernel reads of an engine.embedded.redopack.Txn (head, ids, dirty, session). */
typedef struct {
    uint64_t cls, header_dba, usn, slot, sqn, logon; /* TxHead */
    PyObject *ids, *blocks, *dirty, *session;
    uint64_t rec, undo_seq;
    int started;
} Tx;

static int attr_u64(PyObject *o, PyObject *name, uint64_t max, uint64_t *out) {
    PyObject *v = PyObject_GetAttr(o, name);
    if (v == NULL) return -1;
    int r = as_u64(v, max, out);
    Py_DECREF(v);
    return r;
}

static int tx_read(PyObject *txo, Tx *t) {
    if (!PyTuple_Check(txo) || PyTuple_GET_SIZE(txo) != 4) {
        PyErr_SetString(PyExc_TypeError, "tx must be a redopack.Txn");
        return -1;
    }
    PyObject *head = PyTuple_GET_ITEM(txo, 0);
    if (!PyTuple_Check(head) || PyTuple_GET_SIZE(head) != 8) {
        PyErr_SetString(PyExc_TypeError, "Txn.head must be a bulkpack.TxHead");
        return -1;
    }
    if (item_u64(head, 0, 0xFFFF, &t->cls) < 0 || item_u64(head, 1, UINT32_MAX, &t->header_dba) < 0 ||
        item_u64(head, 2, 0xFFFF, &t->usn) < 0 || item_u64(head, 3, 0xFFFF, &t->slot) < 0 ||
        item_u64(head, 4, UINT32_MAX, &t->sqn) < 0 || item_u64(head, 5, UINT32_MAX, &t->logon) < 0)
        return -1;
    t->ids = PyTuple_GET_ITEM(txo, 1);
    t->dirty = PyTuple_GET_ITEM(txo, 2);
    t->session = PyTuple_GET_ITEM(txo, 3);
    if (!PyDict_Check(t->dirty) || !PyBytes_Check(t->session)) {
        PyErr_SetString(PyExc_TypeError, "Txn.dirty must be a dict, Txn.session bytes");
        return -1;
    }
    PyObject *started = PyObject_GetAttr(t->ids, s_started);
    if (started == NULL) return -1;
    t->started = PyObject_IsTrue(started);
    Py_DECREF(started);
    if (t->started < 0 || attr_u64(t->ids, s_rec, 0xFFFF, &t->rec) < 0 ||
        attr_u64(t->ids, s_undo_seq, 0xFFFF, &t->undo_seq) < 0)
        return -1;
    t->blocks = PyObject_GetAttr(t->ids, s_blocks); /* released by the caller */
    if (t->blocks == NULL) return -1;
    if (!PySet_Check(t->blocks)) {
        PyErr_SetString(PyExc_TypeError, "TxnIds.blocks must be a set");
        return -1;
    }
    return 0;
}

static uint64_t undo_dba(const Tx *t, uint64_t seq) { return UNDO_BLOCKS + t->usn * 0x100 + (seq & 0xFF); }

/* TxnIds.next_rec: the next undo record's address (dba, seq, rec). */
static void next_rec(Tx *t, uint64_t uba[3]) {
    if (++t->rec > 0xFF) {
        t->rec = 1;
        t->undo_seq = (t->undo_seq + 1) & 0xFFFF;
    }
    uba[0] = undo_dba(t, t->undo_seq);
    uba[1] = t->undo_seq;
    uba[2] = t->rec;
}

/* What the change advanced, written back: rec, undo_seq; last_uba cleared (as next_rec). */
static int tx_write(const Tx *t) {
    PyObject *rec = PyLong_FromUnsignedLongLong(t->rec), *seq = NULL;
    int bad = rec == NULL || PyObject_SetAttr(t->ids, s_rec, rec) < 0 ||
              (seq = PyLong_FromUnsignedLongLong(t->undo_seq)) == NULL ||
              PyObject_SetAttr(t->ids, s_undo_seq, seq) < 0 ||
              PyObject_SetAttr(t->ids, s_last_uba, Py_None) < 0;
    Py_XDECREF(rec);
    Py_XDECREF(seq);
    return bad ? -1 : 0;
}

/* ---- change vectors (engine/embedded/bulkpack.py) ------------------------------------------------ */
/* A redo KTB (redopack.change, first_ktb; bulkpack ktb_continue, ktb_first): op 0x02 C in
   a block the transaction changed before (CV typ 0), else 0x01 F (typ 2), or 0x11 F with
   the cleanout of the ITL entries commits left in the block when ``scn`` is given (row
   blocks; index leaves get none). */
typedef struct {
    unsigned op, kind, typ;
    uint64_t uba[3];
    PyObject *entries; /* its cleanout entries (owned), or NULL */
    uint64_t scn;
} Ktb;

static int choose_ktb(Tx *t, uint64_t dba, uint64_t scn, Ktb *k) {
    k->entries = NULL;
    next_rec(t, k->uba);
    PyObject *key = PyLong_FromUnsignedLongLong(dba), *entries = NULL;
    if (key == NULL) return -1;
    int seen = PySet_Contains(t->blocks, key);
    if (seen < 0) goto fail;
    k->op = seen ? 0x02 : 0x01;
    k->kind = seen ? 'C' : 'F';
    k->typ = seen ? 0 : 2;
    if (!seen && PySet_Add(t->blocks, key) < 0) goto fail;
    if (!seen && scn) {
        entries = PyDict_GetItemWithError(t->dirty, key);
        if (entries == NULL && PyErr_Occurred()) goto fail;
        Py_XINCREF(entries);
        if (entries != NULL && PyDict_DelItem(t->dirty, key) < 0) goto fail;
        int some = entries == NULL ? 0 : PyObject_IsTrue(entries);
        if (some < 0) goto fail;
        if (some) {
            k->entries = PySequence_Fast(entries, "cleanout entries must be a sequence");
            if (k->entries == NULL) goto fail;
            if (PySequence_Fast_GET_SIZE(k->entries) > 0xFFFF) {
                PyErr_SetString(StructError, "too many cleanout entries");
                goto fail;
            }
            k->op = 0x11;
            k->scn = scn;
        }
    }
    Py_XDECREF(entries);
    Py_DECREF(key);
    return 0;
fail:
    Py_XDECREF(entries);
    Py_CLEAR(k->entries);
    Py_DECREF(key);
    return -1;
}

static size_t ktb_size(const Ktb *k) {
    return 45 + (k->entries ? (size_t)PySequence_Fast_GET_SIZE(k->entries) * 12 : 0);
}

/* The KTB's bytes (``op`` 0x03 Z with no transaction: an undo's KTB). */
static u8 *put_ktb(u8 *q, const Tx *t, const Ktb *k) {
    Py_ssize_t n = k->entries ? PySequence_Fast_GET_SIZE(k->entries) : 0;
    int xid = k->op == 0x01 || k->op == 0x11;
    q = PACK(q, KTB, k->op, k->kind, xid ? t->usn : 0, xid ? t->slot : 0, xid ? t->sqn : 0,
             k->uba[0], k->uba[1], k->uba[2], 0, (uint64_t)n, 0, n ? k->scn : NO_SCN);
    q = text(q, ITL_FLAGS);
    for (Py_ssize_t i = 0; i < n; i++) { /* checked by check_entries */
        PyObject *e = PySequence_Fast_GET_ITEM(k->entries, i);
        uint64_t v[3];
        for (int j = 0; j < 3; j++) as_u64(PyTuple_GET_ITEM(e, j), UINT64_MAX, &v[j]);
        q = pack(q, ENTRY, v);
    }
    return q;
}

/* The cleanout entries must be (itl u16, flag u16, scn u64) tuples (Database.note_commit
   makes them) before anything is written. */
static int check_entries(const Ktb *k) {
    Py_ssize_t n = k->entries ? PySequence_Fast_GET_SIZE(k->entries) : 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PySequence_Fast_GET_ITEM(k->entries, i);
        uint64_t v;
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 3) {
            PyErr_SetString(PyExc_TypeError, "a cleanout entry must be (itl, flag, scn)");
            return -1;
        }
        if (item_u64(e, 0, 0xFFFF, &v) < 0 || item_u64(e, 1, 0xFFFF, &v) < 0 ||
            item_u64(e, 2, UINT64_MAX, &v) < 0)
            return -1;
    }
    return 0;
}

static const Ktb UNDO_KTB = {0x03, 'Z', 0, {0, 0, 0}, NULL, 0};

/* ---- the Table type ------------------------------------------------------------------------- */
typedef struct {
    PyObject_HEAD
    uint64_t obj, dataobj, afn, hdba;
    Py_ssize_t ncols, key_col;
    int has_index;
    uint64_t iobj, idataobj, leaf, indexid;
    char *kinds;
    PyObject *encoders; /* tuple of callables */
} Table;

/* One row change: where its records go and what it is. */
typedef struct {
    Tx tx;
    uint64_t logical, switch_at, scn, ts, dba, slot;
    PyObject *rec_ids;
    Ktb ktb;   /* the row block's */
    int begin; /* the transaction's first change */
    uint64_t slot_uba[3]; /* the 5.2's next undo address, when it begins */
} Change;

/* The head of a 5.1 undo up to the undone op (bulkpack TablePack._undo, index_change): a
   transaction's first undo record carries the begin flag and the logon user. */
static u8 *put_undo(u8 *q, const Change *c, const uint64_t uba[3], int begin, unsigned layer,
                    unsigned code, uint64_t obj, uint64_t dataobj, unsigned bits) {
    const Tx *t = &c->tx;
    return PACK(q, CV_HEAD UNDO XID, 5, 1, 0, 0, t->cls + 1, 3, uba[0], OBJ_UNDO, c->scn,
                begin ? 2 : 1, 4, layer, code, obj, dataobj, t->slot, begin ? 0 : uba[2] - 1, 4, 0,
                0, begin ? 0x12 : 0x22, uba[1], uba[2], begin ? t->logon : 0, begin ? 3 : bits,
                t->usn, t->slot, t->sqn);
}

/* KDO of the row's block and slot. */
static u8 *put_kdo(u8 *q, const Table *self, const Change *c, unsigned lock, unsigned size,
                   unsigned lb, unsigned cc, unsigned nnew) {
    return PACK(q, KDO, c->dba, self->hdba, c->slot, 0x2C, 2, lock, size, lb, cc, nnew);
}

/* An 11.x redo up to its KDO (TablePack._kdo). */
static u8 *put_redo(u8 *q, const Table *self, const Change *c, unsigned code) {
    return PACK(q, CV_HEAD, 11, code, c->ktb.typ, 0, 1, self->afn, c->dba, self->dataobj, c->scn,
                1, 1);
}

/* Supplemental data of a row undo: the key column's before image (TablePack._key). */
static u8 *put_key_supp(u8 *q, const Table *self, const Val *key) {
    return put_col(put16(q, 1), (unsigned)self->key_col, key);
}

/* bulkpack.columns: a row's column count (trailing NULLs are not stored) and size. */
static Py_ssize_t row_shape(const Val *v, Py_ssize_t n, size_t *size) {
    while (n && v[n - 1].n == NULL_LEN) n--;
    *size = 3 + (size_t)n;
    for (Py_ssize_t i = 0; i < n; i++) *size += len_of(&v[i]);
    return n;
}

/* bulkpack.columns: the column vector of a row's first n columns (row_shape). */
static u8 *put_columns(u8 *q, const Val *v, Py_ssize_t n) {
    q = put16(q, (uint64_t)n);
    for (Py_ssize_t i = 0; i < n; i++) q = put_col(q, (unsigned)i, &v[i]);
    return q;
}

/* bulkpack.some_columns: the columns ``nos``. */
static u8 *put_some(u8 *q, const unsigned *nos, Py_ssize_t n, const Val *v) {
    q = put16(q, (uint64_t)n);
    for (Py_ssize_t i = 0; i < n; i++) q = put_col(q, nos[i], &v[i]);
    return q;
}

/* The index record's change vectors (TablePack.index_change): [5.1 10.22 undo, 10.2
   insert leaf row | 10.4 delete leaf row] for the row's key as the index stores it. */
static u8 *put_index(u8 *q, const Table *self, const Change *c, const Ktb *k, int insert,
                     const u8 *ikey, size_t klen) {
    u8 keydata[6] = {(u8)(c->dba >> 24), (u8)(c->dba >> 16), (u8)(c->dba >> 8), (u8)c->dba,
                     (u8)(c->slot >> 8), (u8)c->slot}; /* big-endian */
    q = put_undo(q, c, k->uba, 0, 10, 22, self->iobj, self->idataobj, 4);
    q = PACK(q, IDX, 0, 2, 0, 0, self->indexid, self->leaf, 1);
    q = put_ktb(text(q, insert ? "purge leaf row" : "restore leaf row (clear leaf delete flags)"),
                &c->tx, &UNDO_KTB);
    q = putn(put32(q, klen), ikey, klen);
    q = put32(q, 0); /* no ints, no ints */
    q = insert ? put32(q, 0) : putn(put32(q, 6), keydata, 6);
    q = put16(q, 0); /* no columns */
    q = PACK(q, CV_HEAD IDX, 10, insert ? 2 : 4, 0, 0, 1, self->afn, self->leaf, self->idataobj,
             c->scn, 1, 2, 0, 2, c->slot, klen + 6 + 4, 0, 0, 1);
    q = put_ktb(text(q, insert ? "insert leaf row" : "delete leaf row"), &c->tx, k);
    if (!insert) return put32(put32(put32(q, 0), 0), 0); /* no key, no ints, no key data */
    q = putn(put32(q, klen), ikey, klen);
    return putn(put32(put32(q, 0), 6), keydata, 6);
}

/* ---- records ------------------------------------------------------------------------------ */
/* Frames the record whose change vectors start at at + FRAME + REC_HEAD (LogWriter
   add_native) for stream position *logical, which moves past it. */
static void frame(Buf *b, size_t at, const Change *c, uint64_t *logical, unsigned ncv) {
    size_t len = b->n - at - FRAME;
    uint64_t pos = *logical / PAYLOAD * BLOCK + (BLOCK + BLOCK_HEAD) + *logical % PAYLOAD;
    u8 *q = putn(b->p + at + FRAME, PyBytes_AS_STRING(c->rec_ids), 8);
    PACK(q, "IHIQHQH", pos >> 9, pos & 0x1FF, 0, c->scn, 1, c->ts, ncv);
    put32(put32(b->p + at, len), crc32_of(b->p + at + FRAME, len));
    *logical += FRAME + len;
}

/* The frames in ``b`` (records from starts[i]), or, when the log switch falls due before the
   last record (the stream reaches switch_at), (the frames before it, [(ncv, cvs), ...]). */
static PyObject *result(const Buf *b, const size_t *starts, const unsigned *ncv, int nrec,
                        const uint64_t *ends, uint64_t switch_at) {
    int upto = nrec;
    for (int i = 0; i + 1 < nrec && upto == nrec; i++)
        if (ends[i] >= switch_at) upto = i + 1;
    if (upto == nrec) return PyBytes_FromStringAndSize((const char *)b->p, (Py_ssize_t)b->n);
    PyObject *rest = PyList_New(0), *item = NULL;
    for (int i = upto; rest != NULL && i < nrec; i++) {
        size_t lo = starts[i] + FRAME + REC_HEAD, hi = i + 1 < nrec ? starts[i + 1] : b->n;
        item = Py_BuildValue("(Iy#)", ncv[i], (const char *)b->p + lo, (Py_ssize_t)(hi - lo));
        if (item == NULL || PyList_Append(rest, item) < 0) Py_CLEAR(rest);
        Py_XDECREF(item);
    }
    return rest == NULL ? NULL : Py_BuildValue("(y#N)", b->p, (Py_ssize_t)starts[upto], rest);
}

/* ---- Table methods ------------------------------------------------------------------------- */
static int table_init(Table *self, PyObject *args, PyObject *kwds) {
    PyObject *pack, *kinds, *encoders, *index;
    static char *names[] = {"pack", "kinds", "encoders", NULL};
    uint64_t ncols, key_col;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OUO:Table", names, &pack, &kinds, &encoders) ||
        attr_u64(pack, s_obj, UINT32_MAX, &self->obj) < 0 ||
        attr_u64(pack, s_dataobj, UINT32_MAX, &self->dataobj) < 0 ||
        attr_u64(pack, s_afn, 0xFFFF, &self->afn) < 0 ||
        attr_u64(pack, s_hdba, UINT32_MAX, &self->hdba) < 0 ||
        attr_u64(pack, s_ncols, 0xFFFF, &ncols) < 0 || attr_u64(pack, s_key_col, 0xFFFF, &key_col) < 0 ||
        (index = PyObject_GetAttr(pack, s_index)) == NULL)
        return -1;
    self->ncols = (Py_ssize_t)ncols;
    self->key_col = (Py_ssize_t)key_col;
    self->has_index = index != Py_None;
    int bad = 0;
    if (self->has_index) {
        bad = !PyTuple_Check(index) || PyTuple_GET_SIZE(index) != 4;
        if (bad) PyErr_SetString(PyExc_TypeError, "pack.index must be 4 integers or None");
        bad = bad || item_u64(index, 0, UINT32_MAX, &self->iobj) < 0 ||
              item_u64(index, 1, UINT32_MAX, &self->idataobj) < 0 ||
              item_u64(index, 2, UINT32_MAX, &self->leaf) < 0 ||
              item_u64(index, 3, UINT32_MAX, &self->indexid) < 0;
    }
    Py_DECREF(index);
    PyObject *enc = bad ? NULL : PySequence_Tuple(encoders);
    if (enc == NULL) return -1;
    if (PyUnicode_GET_LENGTH(kinds) != self->ncols || PyTuple_GET_SIZE(enc) != self->ncols ||
        key_col >= ncols) {
        PyErr_Format(PyExc_ValueError, "%zd columns, %zd kinds, %zd encoders", self->ncols,
                     PyUnicode_GET_LENGTH(kinds), PyTuple_GET_SIZE(enc));
        Py_DECREF(enc);
        return -1;
    }
    char *k = PyMem_Malloc((size_t)self->ncols + 1);
    if (k == NULL) {
        Py_DECREF(enc);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < self->ncols; i++) {
        Py_UCS4 ch = PyUnicode_READ_CHAR(kinds, i);
        if (ch != K_NUMBER && ch != K_DATE && ch != K_TEXT) {
            PyErr_Format(PyExc_ValueError, "unknown column kind in %R (N, D, T)", kinds);
            PyMem_Free(k);
            Py_DECREF(enc);
            return -1;
        }
        k[i] = (char)ch;
    }
    PyMem_Free(self->kinds);
    self->kinds = k;
    Py_XSETREF(self->encoders, enc);
    return 0;
}

static void table_dealloc(Table *self) {
    PyMem_Free(self->kinds);
    Py_XDECREF(self->encoders);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Values of columns ``cols`` (all when NULL) from ``seq`` items first.., appended to v. */
static int encode_values(const Table *self, PyObject *seq, Py_ssize_t first, Py_ssize_t n,
                         const unsigned *cols, Val *v, Py_ssize_t *count) {
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t col = cols ? (Py_ssize_t)cols[i] : i;
        if (value_of(PySequence_Fast_GET_ITEM(seq, first + i), self->kinds[col],
                     PyTuple_GET_ITEM(self->encoders, col), &v[*count]) < 0)
            return -1;
        ++*count;
    }
    return 0;
}

/* The values a change needs, encoded: insert and delete, the row (_rid, values...);
   update, its old values, new values and key. */
typedef struct {
    Val v[2 * LOCAL_VALUES + 1];
    Val *heap;
    Py_ssize_t n, nset;
    unsigned cols[LOCAL_VALUES];
} Values;

static Val *vals(Values *vs) { return vs->heap ? vs->heap : vs->v; }

static void values_free(Values *vs) {
    for (Py_ssize_t i = 0; i < vs->n; i++) Py_XDECREF(vals(vs)[i].ref);
    PyMem_Free(vs->heap);
}

static int seq_len(PyObject *seq, Py_ssize_t want, const char *what) {
    if (PySequence_Fast_GET_SIZE(seq) == want) return 0;
    PyErr_Format(PyExc_ValueError, "%s: %zd values, %zd expected", what,
                 PySequence_Fast_GET_SIZE(seq), want);
    return -1;
}

static int read_values(const Table *self, int op, PyObject *const *args, Values *vs) {
    PyObject *row = NULL, *cols = NULL, *nw = NULL;
    int bad = -1;
    vs->n = vs->nset = 0;
    vs->heap = NULL;
    if ((row = PySequence_Fast(args[op == OP_UPDATE ? 9 : 8], "row must be a sequence")) == NULL)
        goto out;
    if (op != OP_UPDATE) {
        if (seq_len(row, self->ncols + 1, "row (_rid, values...)") < 0) goto out;
        if (self->ncols > 2 * LOCAL_VALUES + 1 &&
            (vs->heap = PyMem_Calloc((size_t)self->ncols, sizeof(Val))) == NULL) {
            PyErr_NoMemory();
            goto out;
        }
        bad = encode_values(self, row, 1, self->ncols, NULL, vals(vs), &vs->n);
        goto out;
    }
    if ((cols = PySequence_Fast(args[8], "set_cols must be a sequence")) == NULL ||
        (nw = PySequence_Fast(args[10], "new must be a sequence")) == NULL)
        goto out;
    Py_ssize_t n = vs->nset = PySequence_Fast_GET_SIZE(cols);
    if (n > LOCAL_VALUES) {
        PyErr_SetString(PyExc_ValueError, "too many columns set");
        goto out;
    }
    if (seq_len(row, n + 2, "row (_rid, key, old values...)") < 0 || seq_len(nw, n, "new") < 0)
        goto out;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t c = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(cols, i));
        if (c == -1 && PyErr_Occurred()) goto out;
        if (c < 0 || c >= self->ncols) {
            PyErr_SetString(PyExc_IndexError, "set column out of range");
            goto out;
        }
        vs->cols[i] = (unsigned)c;
    }
    unsigned key = (unsigned)self->key_col;
    bad = encode_values(self, row, 2, n, vs->cols, vs->v, &vs->n) < 0 ||
          encode_values(self, nw, 0, n, vs->cols, vs->v, &vs->n) < 0 ||
          encode_values(self, row, 1, 1, &key, vs->v, &vs->n) < 0;
out:
    Py_XDECREF(row);
    Py_XDECREF(cols);
    Py_XDECREF(nw);
    return bad ? -1 : 0;
}

/* insert, update, delete: (tx, logical, rec_ids, switch_at, scn, ts, dba, slot, ...). */
static PyObject *row_change(Table *self, PyObject *const *args, Py_ssize_t nargs, int op) {
    static const char *names[] = {"insert", "update", "delete"};
    Change c;
    Values vs;
    Buf b;
    PyObject *out = NULL;
    if (nargs != (op == OP_UPDATE ? 11 : 9)) {
        PyErr_Format(PyExc_TypeError, "%s() takes %d arguments (%zd given)", names[op],
                     op == OP_UPDATE ? 11 : 9, nargs);
        return NULL;
    }
    if (!PyBytes_Check(args[2]) || PyBytes_GET_SIZE(args[2]) != 8) {
        PyErr_SetString(PyExc_TypeError, "rec_ids must be 8 bytes (LogWriter.rec_ids)");
        return NULL;
    }
    c.rec_ids = args[2];
    c.tx.blocks = NULL;
    c.ktb.entries = NULL;
    buf_init(&b);
    if (as_u64(args[1], UINT64_MAX, &c.logical) < 0 || as_u64(args[3], UINT64_MAX, &c.switch_at) < 0 ||
        as_u64(args[4], INT64_MAX, &c.scn) < 0 || as_i64(args[5], &c.ts) < 0 ||
        as_u64(args[6], UINT32_MAX, &c.dba) < 0 || as_u64(args[7], 0xFFFF, &c.slot) < 0)
        return NULL;
    /* the values first: a value the Python path would refuse changes nothing */
    if (read_values(self, op, args, &vs) < 0) goto out;
    Val *v = vals(&vs), *key = op == OP_UPDATE ? &v[2 * vs.nset] : &v[self->key_col];
    int index = self->has_index && op != OP_UPDATE;
    if (index && key->n > 255) { /* its index form is length-prefixed (redopack.index_key) */
        PyErr_SetString(PyExc_ValueError, "bytes must be in range(0, 256)");
        goto out;
    }
    size_t cols_size = 2 + 6 * (size_t)vs.n, size = 0;
    for (Py_ssize_t i = 0; i < vs.n; i++) cols_size += len_of(&v[i]);
    Py_ssize_t count = op == OP_UPDATE ? 0 : row_shape(v, vs.n, &size);
    if (size > 0xFFFF) { /* the KDO's row size is a u16 */
        PyErr_SetString(StructError, "row too large");
        goto out;
    }
    if (tx_read(args[0], &c.tx) < 0) goto out;
    c.begin = !c.tx.started;
    if (c.begin) { /* the 5.2 slot allocation points at the undo record to come */
        c.slot_uba[0] = undo_dba(&c.tx, c.tx.undo_seq);
        c.slot_uba[1] = c.tx.undo_seq;
        c.slot_uba[2] = c.tx.rec + 1;
        if (PyObject_SetAttr(c.tx.ids, s_started, Py_True) < 0) goto out;
    }
    if (choose_ktb(&c.tx, c.dba, c.scn, &c.ktb) < 0 || check_entries(&c.ktb) < 0) goto out;

    /* the row record: [5.2], 5.1 row undo, 11.x row redo, [5.20] */
    size_t starts[2] = {0, 0}, session = (size_t)PyBytes_GET_SIZE(c.tx.session);
    u8 *q = need(&b, FRAME + REC_HEAD + 512 + 3 * cols_size + ktb_size(&c.ktb) + session);
    if (q == NULL) goto out;
    q += FRAME + REC_HEAD;
    if (c.begin)
        q = PACK(q, CV_HEAD SLOT UBA XID, 5, 2, 0, 0, c.tx.cls, 3, c.tx.header_dba, OBJ_UNDO, c.scn,
                 1, 3, c.tx.slot, c.tx.sqn, 0x12, 0, 0, c.slot_uba[0], c.slot_uba[1],
                 c.slot_uba[2], 0, 0, 0);
    const uint64_t *uba = c.ktb.uba;
    unsigned ncols = (unsigned)self->ncols, nset = (unsigned)vs.nset;
    if (op == OP_INSERT) { /* [5.1 DRP undo, 11.2 IRP] */
        q = put_kdo(put_undo(q, &c, uba, c.begin, 11, 1, self->obj, self->dataobj, 2), self, &c, 0, 0,
                    0, 0, 0);
        q = put32(put16(put_ktb(text(text(q, "DRP"), FLAGS), &c.tx, &UNDO_KTB), 0), 0);
        q = put_kdo(put_redo(put_key_supp(q, self, key), self, &c, 2), self, &c, 0, (unsigned)size,
                    2, (unsigned)count, 0);
        q = put_ktb(text(text(q, "IRP"), FLAGS), &c.tx, &c.ktb);
        q = put32(put_columns(q, v, count), 0);
    } else if (op == OP_UPDATE) { /* [5.1 URP undo (old values), 11.5 URP (new values)] */
        q = put_kdo(put_undo(q, &c, uba, c.begin, 11, 1, self->obj, self->dataobj, 2), self, &c, 0, 0,
                    0, ncols, nset);
        q = put_ktb(text(text(q, "URP"), FLAGS), &c.tx, &UNDO_KTB);
        q = put32(put_some(q, vs.cols, vs.nset, v), 0);
        q = put_kdo(put_redo(put_key_supp(q, self, key), self, &c, 5), self, &c, 1, 0, 0, ncols, nset);
        q = put_ktb(text(text(q, "URP"), FLAGS), &c.tx, &c.ktb);
        q = put32(put_some(q, vs.cols, vs.nset, v + vs.nset), 0);
    } else { /* [5.1 IRP undo (the whole row), 11.3 DRP] */
        q = put_kdo(put_undo(q, &c, uba, c.begin, 11, 1, self->obj, self->dataobj, 2), self, &c, 0,
                    (unsigned)size, 0, (unsigned)count, 0);
        q = put_ktb(text(text(q, "IRP"), FLAGS), &c.tx, &UNDO_KTB);
        q = put32(put_columns(q, v, count), 0);
        q = put_kdo(put_redo(put_key_supp(q, self, key), self, &c, 3), self, &c, 0, 0, 0, 0, 0);
        q = put_ktb(text(text(q, "DRP"), FLAGS), &c.tx, &c.ktb);
        q = put32(put16(q, 0), 0);
    }
    if (c.begin) q = putn(q, PyBytes_AS_STRING(c.tx.session), session);
    done(&b, q);
    uint64_t ends[2], logical = c.logical;
    unsigned ncv[2] = {c.begin ? 4 : 2, 2};
    frame(&b, starts[0], &c, &logical, ncv[0]);
    ends[0] = logical;

    /* the index record (insert, delete): [5.1 10.22 undo, 10.2 | 10.4] */
    if (index) {
        Ktb leaf;
        u8 ikey[256] = {0xFF}; /* redopack.index_key: 0xFF for NULL, else length + bytes */
        size_t klen = 1 + len_of(key);
        if (key->n != NULL_LEN) {
            ikey[0] = (u8)key->n;
            putn(ikey + 1, key->p, len_of(key));
        }
        if (choose_ktb(&c.tx, self->leaf, 0, &leaf) < 0) goto out;
        starts[1] = b.n;
        if ((q = need(&b, FRAME + REC_HEAD + 512 + 2 * klen)) == NULL) goto out;
        done(&b, put_index(q + FRAME + REC_HEAD, self, &c, &leaf, op == OP_INSERT, ikey, klen));
        frame(&b, starts[1], &c, &logical, ncv[1]);
        ends[1] = logical;
    }
    if (tx_write(&c.tx) == 0) out = result(&b, starts, ncv, 1 + index, ends, c.switch_at);
out:
    Py_CLEAR(c.ktb.entries);
    Py_CLEAR(c.tx.blocks);
    values_free(&vs);
    buf_free(&b);
    return out;
}

static PyObject *table_insert(Table *self, PyObject *const *args, Py_ssize_t nargs) {
    return row_change(self, args, nargs, OP_INSERT);
}
static PyObject *table_update(Table *self, PyObject *const *args, Py_ssize_t nargs) {
    return row_change(self, args, nargs, OP_UPDATE);
}
static PyObject *table_delete(Table *self, PyObject *const *args, Py_ssize_t nargs) {
    return row_change(self, args, nargs, OP_DELETE);
}

/* Table.encode(values): a row's SQLite values as Oracle bytes (tuple of bytes or None). */
static PyObject *table_encode(Table *self, PyObject *values) {
    PyObject *seq = PySequence_Fast(values, "values must be a sequence"), *out = NULL;
    Values vs = {.n = 0, .heap = NULL};
    if (seq == NULL) return NULL;
    if (seq_len(seq, self->ncols, "values") == 0 &&
        (self->ncols <= 2 * LOCAL_VALUES + 1 ||
         (vs.heap = PyMem_Calloc((size_t)self->ncols, sizeof(Val))) != NULL) &&
        encode_values(self, seq, 0, self->ncols, NULL, vals(&vs), &vs.n) == 0)
        out = PyTuple_New(self->ncols);
    else if (!PyErr_Occurred())
        PyErr_NoMemory();
    for (Py_ssize_t i = 0; out != NULL && i < self->ncols; i++) {
        const Val *v = &vals(&vs)[i];
        PyObject *item = v->n == NULL_LEN ? Py_NewRef(Py_None)
                                          : PyBytes_FromStringAndSize((const char *)v->p, v->n);
        if (item == NULL) Py_CLEAR(out);
        else PyTuple_SET_ITEM(out, i, item);
    }
    values_free(&vs);
    Py_DECREF(seq);
    return out;
}

static PyMethodDef table_methods[] = {
    {"insert", (PyCFunction)(void (*)(void))table_insert, METH_FASTCALL,
     "insert(tx, logical, rec_ids, switch_at, scn, ts, dba, slot, row) -> records"},
    {"update", (PyCFunction)(void (*)(void))table_update, METH_FASTCALL,
     "update(tx, logical, rec_ids, switch_at, scn, ts, dba, slot, set_cols, row, new) -> records"},
    {"delete", (PyCFunction)(void (*)(void))table_delete, METH_FASTCALL,
     "delete(tx, logical, rec_ids, switch_at, scn, ts, dba, slot, row) -> records"},
    {"encode", (PyCFunction)table_encode, METH_O,
     "encode(values) -> a row's SQLite values as Oracle bytes"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "engine._native.redopack.Table",
    .tp_basicsize = sizeof(Table),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Table(pack, kinds, encoders): one table's single-row changes, framed.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)table_init,
    .tp_dealloc = (destructor)table_dealloc,
    .tp_methods = table_methods,
};

/* ---- module functions ------------------------------------------------------------------------ */
/* commit(head, logical, rec_ids, scn, ts, uba, rollback): the framed 5.4 (bulkpack commit_cv)
   that ends a transaction. */
static PyObject *commit(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    Change c = {.logical = 0};
    Buf b;
    uint64_t uba[3];
    if (nargs != 7 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) != 8 ||
        !PyBytes_Check(args[2]) || PyBytes_GET_SIZE(args[2]) != 8 || !PyTuple_Check(args[5]) ||
        PyTuple_GET_SIZE(args[5]) != 3) {
        PyErr_SetString(PyExc_TypeError,
                        "commit(head: TxHead, logical, rec_ids: 8 bytes, scn, ts, uba, rollback)");
        return NULL;
    }
    PyObject *head = args[0];
    int rollback = PyObject_IsTrue(args[6]);
    c.rec_ids = args[2];
    if (rollback < 0 || as_u64(args[1], UINT64_MAX, &c.logical) < 0 ||
        as_u64(args[3], INT64_MAX, &c.scn) < 0 || as_i64(args[4], &c.ts) < 0 ||
        item_u64(head, 0, 0xFFFF, &c.tx.cls) < 0 || item_u64(head, 1, UINT32_MAX, &c.tx.header_dba) < 0 ||
        item_u64(head, 3, 0xFFFF, &c.tx.slot) < 0 || item_u64(head, 4, UINT32_MAX, &c.tx.sqn) < 0 ||
        item_u64(args[5], 0, UINT32_MAX, &uba[0]) < 0 || item_u64(args[5], 1, 0xFFFF, &uba[1]) < 0 ||
        item_u64(args[5], 2, 0xFFFF, &uba[2]) < 0)
        return NULL;
    buf_init(&b); /* its own room holds a commit record */
    u8 *q = b.p + FRAME + REC_HEAD;
    done(&b, PACK(q, CV_HEAD COMMIT UBA, 5, 4, 0, 0, c.tx.cls, 3, c.tx.header_dba, OBJ_UNDO, c.scn,
                  1, 5, c.tx.slot, c.tx.sqn, 0, 9, rollback ? 0x6 : 0x2, 0, 0, 0, uba[0], uba[1],
                  uba[2]));
    uint64_t logical = c.logical;
    frame(&b, 0, &c, &logical, 1);
    return PyBytes_FromStringAndSize((const char *)b.p, (Py_ssize_t)b.n);
}

static PyObject *py_crc32(PyObject *module, PyObject *arg) {
    Py_buffer data;
    if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE) < 0) return NULL;
    uint32_t c = crc32_of(data.buf, (size_t)data.len);
    PyBuffer_Release(&data);
    return PyLong_FromUnsignedLong(c);
}

static PyMethodDef module_methods[] = {
    {"commit", (PyCFunction)(void (*)(void))commit, METH_FASTCALL,
     "commit(head, logical, rec_ids, scn, ts, uba, rollback) -> the framed 5.4"},
    {"crc32", py_crc32, METH_O, "zlib's CRC-32 of a buffer."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "redopack",
    .m_doc = "The workload fast path's row-change kernel in C (engine/embedded/redopack.py).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit_redopack(void) {
    static const char *attrs[] = {"rec", "undo_seq", "started", "blocks", "last_uba", "obj",
                                  "dataobj", "afn", "hdba", "ncols", "key_col", "index"};
    PyObject **slots[] = {&s_rec, &s_undo_seq, &s_started, &s_blocks, &s_last_uba, &s_obj,
                          &s_dataobj, &s_afn, &s_hdba, &s_ncols, &s_key_col, &s_index};
    crc_init();
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        if ((*slots[i] = PyUnicode_InternFromString(attrs[i])) == NULL) return NULL;
    PyObject *st = PyImport_ImportModule("struct");
    if (st == NULL) return NULL;
    StructError = PyObject_GetAttrString(st, "error");
    Py_DECREF(st);
    if (StructError == NULL || PyType_Ready(&TableType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddObjectRef(m, "Table", (PyObject *)&TableType) < 0) Py_CLEAR(m);
    return m;
}
