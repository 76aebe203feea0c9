/*
 * redopack: the workload fast path's row-change kernel in C. engine/embedded/redopack.py is
 * its reference and its fallback: the same classes, methods and bytes (held equal by
 * tests/source/test_source_redopack.py).
 *
 * Table(shape, kinds, encoders).insert/update/delete take one single-row change and do all
 * of its per-row work in one call: they encode the column values that come from SQLite
 * (NUMBER from int and float, DATE from its ISO text, the character types as UTF-8; any
 * other value goes to the column's Python encoder), take the undo record addresses
 * (advancing the transaction's TxnIds as TxnIds.next_rec does), choose each block's redo
 * KTB (a transaction's first change in a block carries the cleanout of the ITL entries
 * that commits left, popped from the database's dirty map) and pack the change vectors of
 * each record in Oracle's format, as engine/redo/payloads.py writes the generic path's:
 * 12c vector headers (32 bytes), little-endian, the length array, each field padded to 4
 * bytes. They return the records' change vectors, one bytes object a record, which
 * LogWriter.add_vectors frames (record header, LWN, blocks). commit() packs the 5.4 that
 * ends a transaction.
 *
 * Offsets: every field is written at the offset the tables of engine/redo/vectors.py (and
 * the vector header's of engine/redo/layout.py) give; the <TABLE>_AT_<field> macros below
 * state them as (offset, struct code) and tests/source/test_source_redopack.py checks each
 * against those tables, and every size against theirs. Unnamed bytes are zero.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#define NULL_LEN (-1)
#define MAX_NUMBER_DIGITS 20 /* base-100 digits */
#define MIN_EXP (-65)
#define MAX_EXP 62
#define NEG_TERMINATOR 0x66
#define LOCAL_VALUES 32

/* ---- Oracle's layouts (checked against engine/redo/vectors.py and layout.py) ---------------- */
#define VECTOR_HEADER_12C_SIZE 32
#define VECTOR_HEADER_12C_AT_layer 0, 'B'
#define VECTOR_HEADER_12C_AT_code 1, 'B'
#define VECTOR_HEADER_12C_AT_cls 2, 'H'
#define VECTOR_HEADER_12C_AT_afn 4, 'H'
#define VECTOR_HEADER_12C_AT_obj_high 6, 'H'
#define VECTOR_HEADER_12C_AT_dba 8, 'I'
#define VECTOR_HEADER_12C_AT_scn 12, 'I'
#define VECTOR_HEADER_12C_AT_scn_wrap 16, 'H'
#define VECTOR_HEADER_12C_AT_seq 20, 'B'
#define VECTOR_HEADER_12C_AT_typ 21, 'B'
#define VECTOR_HEADER_12C_AT_obj_low 22, 'H'
#define VECTOR_HEADER_12C_AT_con_id 24, 'H'
#define KTUDH_SIZE 32
#define KTUDH_AT_slt 0, 'H'
#define KTUDH_AT_sqn 4, 'I'
#define KTUDH_AT_uba_dba 8, 'I'
#define KTUDH_AT_uba_seq 12, 'H'
#define KTUDH_AT_uba_rec 14, 'B'
#define KTUDH_AT_flg 16, 'H'
#define KTUDB_SIZE 20
#define KTUDB_AT_flg 4, 'H'
#define KTUDB_AT_usn 8, 'H'
#define KTUDB_AT_slt 10, 'H'
#define KTUDB_AT_sqn 12, 'I'
#define KTUDB_AT_seq 16, 'H'
#define KTUDB_AT_rec 18, 'B'
#define KTUB_SIZE 28
#define KTUB_AT_objn 0, 'I'
#define KTUB_AT_objd 4, 'I'
#define KTUB_AT_tsn 8, 'I'
#define KTUB_AT_opc_layer 16, 'B'
#define KTUB_AT_opc_code 17, 'B'
#define KTUB_AT_slt 18, 'B'
#define KTUB_AT_rci 19, 'B'
#define KTUB_AT_uflg 20, 'H'
#define KTUB_AT_logon_user 24, 'I'
#define KTUB_BEGIN 0x0001
#define KTUCM_SIZE 20
#define KTUCM_AT_slt 0, 'H'
#define KTUCM_AT_sqn 4, 'I'
#define KTUCM_AT_sta 12, 'B'
#define KTUCM_AT_flg 16, 'B'
#define KTUCF_SIZE 12
#define KTUCF_AT_uba_dba 0, 'I'
#define KTUCF_AT_uba_seq 4, 'H'
#define KTUCF_AT_uba_rec 6, 'B'
#define KTB_SIZE 24
#define KTB_AT_op 0, 'B'
#define KTB_AT_usn 8, 'H'
#define KTB_AT_slt 10, 'H'
#define KTB_AT_sqn 12, 'I'
#define KTB_AT_uba_dba 16, 'I'
#define KTB_AT_uba_seq 20, 'H'
#define KTB_AT_uba_rec 22, 'B'
#define KTB_CLEANOUT 0x10
#define CLEANOUT_SIZE 12
#define CLEANOUT_AT_scn 0, 'Q'
#define CLEANOUT_AT_n 8, 'H'
#define CLEANOUT_ENTRY_SIZE 12
#define CLEANOUT_ENTRY_AT_itli 0, 'B'
#define CLEANOUT_ENTRY_AT_flg 1, 'B'
#define CLEANOUT_ENTRY_AT_scn 4, 'Q'
#define KDO_AT_bdba 0, 'I'
#define KDO_AT_hdba 4, 'I'
#define KDO_AT_op 10, 'B'
#define KDO_AT_itli 12, 'B'
#define KDO_ROW_AT_fb 16, 'B'
#define KDO_ROW_AT_lb 17, 'B'
#define KDO_ROW_AT_cc 18, 'B'
#define KDO_ROW_AT_size 40, 'H'
#define KDO_ROW_AT_slot 42, 'H'
#define KDO_ROW_NULLS 45
#define KDO_URP_AT_fb 16, 'B'
#define KDO_URP_AT_lock 17, 'B'
#define KDO_URP_AT_slot 20, 'H'
#define KDO_URP_AT_ncol 22, 'B'
#define KDO_URP_AT_nnew 23, 'B'
#define KDO_URP_NULLS 26
#define KDO_SLOT_AT_slot 16, 'H'
#define KDO_SLOT_SIZE 20
#define UNDO_APPLIED_SIZE 16
#define UNDO_APPLIED_AT_usn 0, 'H'
#define UNDO_APPLIED_AT_slt 2, 'H'
#define UNDO_APPLIED_AT_sqn 4, 'I'
#define UNDO_APPLIED_AT_uba_dba 8, 'I'
#define UNDO_APPLIED_AT_uba_seq 12, 'H'
#define UNDO_APPLIED_AT_uba_rec 14, 'B'
#define SUPP_SIZE 20
#define SUPP_AT_type 0, 'B'
#define SUPP_AT_fb 1, 'B'
#define SUPP_AT_cc 2, 'H'
#define SUPP_TYPE 1
#define INDEX_SIZE 16
#define INDEX_AT_action 0, 'B'
#define INDEX_AT_itl 2, 'B'
#define INDEX_AT_kdxlkflg 3, 'B'
#define INDEX_AT_sno 4, 'H'
#define INDEX_AT_row_size 6, 'H'
#define INDEX_AT_indexid 8, 'I'
#define INDEX_AT_block 12, 'I'
#define RECORD_HEADER_SIZE 24
#define RECORD_HEADER_AT_size 0, 'I'
#define RECORD_HEADER_AT_vld 4, 'B'
#define RECORD_HEADER_AT_scn_wrap 6, 'H'
#define RECORD_HEADER_AT_scn 8, 'I'
#define RECORD_HEADER_AT_subscn 12, 'H'
#define LWN_HEADER_SIZE 68
#define LWN_HEADER_AT_lwn_nst 26, 'H'
#define VLD_LWN 0x04
#define BLOCK_HEADER_SIZE 16
#define BLOCK_HEADER_AT_signature 0, 'B'
#define BLOCK_HEADER_AT_block_type 1, 'B'
#define BLOCK_HEADER_AT_block 4, 'I'
#define BLOCK_HEADER_AT_sequence 8, 'I'
#define BLOCK_HEADER_AT_first 12, 'H'
#define BLOCK_HEADER_AT_checksum 14, 'H'
#define BLOCK_SIGNATURE 0x01
#define BLOCK_TYPE_REDO 0x22
#define FIRST_RECORD_FLAG 0x8000
/* values the generic path writes (engine/embedded/redogen.py, engine/embedded/redopack.py) */
#define OBJ_UNDO 0xFFFFFFFFu
#define UNDO_FILE 3
#define UNDO_BLOCKS ((3u << 22) | 0x100u) /* usn u's undo block of sequence s: + u*0x100 + s%256 */
#define FB 0x2C        /* --H-FL--: a whole row piece */
#define KDO_FLAG 0x2C  /* a URP's flag byte */
#define ITL 2
#define LB_REDO 2
#define TSN 4
#define BEGIN_FLG 0x12
#define FLG 0x22
#define COMMIT_STA 9
#define COMMIT_FLG 0x2
#define ROLLBACK_FLAG 0x04
#define OP_F 0x01
#define OP_C 0x02
#define OP_Z 0x03
#define KDO_IRP 2
#define KDO_DRP 3
#define KDO_URP 5
#define INDEX_INSERT 1
#define INDEX_DELETE 2
#define INDEX_PURGE 3
#define INDEX_RESTORE 4
#define KEYDATA 6 /* an index entry's ROWID: block address u32, slot u16, big-endian */
#define KDO_SIZE_MAX 0xFFFF
/* rows.PIECE_ROOM and a row piece's header: a row larger is inserted in pieces */
#define PIECE_ROOM 8076
#define PIECE_HEAD 3
#define MAX_FIELD 0xFFFF

enum { K_NUMBER = 'N', K_DATE = 'D', K_TEXT = 'T' };
enum { OP_INSERT, OP_UPDATE, OP_DELETE };

static PyObject *StructError; /* struct.error: what the Python twin raises for a field too big */
static PyObject *s_rec, *s_undo_seq, *s_started, *s_blocks, *s_last_uba;

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

/* A field of a layout table: (offset, struct code) from a <TABLE>_AT_<field> macro. */
static inline void set(u8 *q, size_t off, char code, uint64_t v) {
    switch (code) {
    case 'B': q[off] = (u8)v; break;
    case 'H': put16(q + off, v); break;
    case 'I': put32(q + off, v); break;
    default: put32(put32(q + off, v), v >> 32); break; /* Q */
    }
}
#define SET(q, field, v) set((q), field, (uint64_t)(v))

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

/* ---- change vectors ---------------------------------------------------------------------------- */
/* A change vector being written (framing.build_vector): its 12c header, its length array
   (a u16 of its size, then one a field, padded to 4 bytes), then each field padded to 4. */
typedef struct {
    u8 *lens; /* the length array's field entries */
    u8 *q;    /* where the next field starts */
    u8 *at;   /* the field being written */
    int i;
} Vec;

static void vec_begin(Vec *v, u8 *q, unsigned layer, unsigned code, uint64_t cls, uint64_t afn,
                      uint64_t dba, uint64_t obj, uint64_t scn, unsigned seq, unsigned typ,
                      int nfields) {
    size_t alen = 2 + 2 * (size_t)nfields, room = (alen + 3) & ~(size_t)3;
    memset(q, 0, VECTOR_HEADER_12C_SIZE + room);
    SET(q, VECTOR_HEADER_12C_AT_layer, layer);
    SET(q, VECTOR_HEADER_12C_AT_code, code);
    SET(q, VECTOR_HEADER_12C_AT_cls, cls);
    SET(q, VECTOR_HEADER_12C_AT_afn, afn);
    SET(q, VECTOR_HEADER_12C_AT_obj_high, obj >> 16);
    SET(q, VECTOR_HEADER_12C_AT_dba, dba);
    SET(q, VECTOR_HEADER_12C_AT_scn, scn & 0xFFFFFFFFu);
    SET(q, VECTOR_HEADER_12C_AT_scn_wrap, scn >> 32);
    SET(q, VECTOR_HEADER_12C_AT_seq, seq);
    SET(q, VECTOR_HEADER_12C_AT_typ, typ);
    SET(q, VECTOR_HEADER_12C_AT_obj_low, obj & 0xFFFF);
    SET(q, VECTOR_HEADER_12C_AT_con_id, 0);
    put16(q + VECTOR_HEADER_12C_SIZE, alen);
    v->lens = q + VECTOR_HEADER_12C_SIZE + 2;
    v->q = q + VECTOR_HEADER_12C_SIZE + room;
    v->i = 0;
}

/* Start a field of ``zero`` bytes set to 0 (a fixed structure); its bytes go at v->at. */
static u8 *fld(Vec *v, size_t zero) {
    v->at = v->q;
    memset(v->at, 0, zero);
    return v->at;
}

/* End the field at ``end``: its length in the array, zero padding to 4 bytes. */
static void fld_end(Vec *v, u8 *end) {
    size_t n = (size_t)(end - v->at);
    put16(v->lens + 2 * v->i++, n);
    while (n & 3) {
        *end++ = 0;
        n++;
    }
    v->q = end;
}

/* A field of bytes. */
static void fld_bytes(Vec *v, const u8 *p, size_t n) { fld_end(v, putn(fld(v, 0), p, n)); }

/* An upper bound of a vector's bytes: header, length array, fields and their padding. */
#define VEC_ROOM(nfields, bytes) (VECTOR_HEADER_12C_SIZE + 4 + 6 * (size_t)(nfields) + (bytes))

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

static int head_read(PyObject *head, Tx *t) {
    if (!PyTuple_Check(head) || PyTuple_GET_SIZE(head) != 6) {
        PyErr_SetString(PyExc_TypeError, "the head must be a redopack.TxHead");
        return -1;
    }
    return item_u64(head, 0, 0xFFFE, &t->cls) < 0 || item_u64(head, 1, UINT32_MAX, &t->header_dba) < 0 ||
                   item_u64(head, 2, 0xFFFF, &t->usn) < 0 || item_u64(head, 3, 0xFF, &t->slot) < 0 ||
                   item_u64(head, 4, UINT32_MAX, &t->sqn) < 0 ||
                   item_u64(head, 5, UINT32_MAX, &t->logon) < 0
               ? -1
               : 0;
}

static int tx_read(PyObject *txo, Tx *t) {
    if (!PyTuple_Check(txo) || PyTuple_GET_SIZE(txo) != 4) {
        PyErr_SetString(PyExc_TypeError, "tx must be a redopack.Txn");
        return -1;
    }
    if (head_read(PyTuple_GET_ITEM(txo, 0), t) < 0) return -1;
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

/* A redo KTB (redopack.redo_ktb): op C in a block the transaction changed before (vector
   typ 0), else F with the transaction's xid (typ 2), with the cleanout of the ITL entries
   commits left in the block when ``scn`` is given (row blocks; index leaves get none). */
typedef struct {
    unsigned op, typ;
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
    k->op = seen ? OP_C : OP_F;
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
            k->op = OP_F | KTB_CLEANOUT;
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

/* The cleanout entries must be (itl u8, flag u8, scn u64) tuples (Database.note_commit
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
        if (item_u64(e, 0, 0xFF, &v) < 0 || item_u64(e, 1, 0xFF, &v) < 0 ||
            item_u64(e, 2, UINT64_MAX, &v) < 0)
            return -1;
    }
    return 0;
}

static size_t ktb_room(const Ktb *k) {
    return KTB_SIZE + (k->entries ? CLEANOUT_SIZE + (size_t)PySequence_Fast_GET_SIZE(k->entries) *
                                                        CLEANOUT_ENTRY_SIZE
                                  : 0);
}

/* The KTB field (redopack.ktb): ``k`` NULL is the undo's (op Z, no transaction). */
static void put_ktb(Vec *v, const Tx *t, const Ktb *k) {
    u8 *q = fld(v, KTB_SIZE);
    if (k == NULL) {
        SET(q, KTB_AT_op, OP_Z);
        fld_end(v, q + KTB_SIZE);
        return;
    }
    SET(q, KTB_AT_op, k->op);
    if (k->op & OP_F) { /* F (and F with a cleanout): the transaction's xid */
        SET(q, KTB_AT_usn, t->usn);
        SET(q, KTB_AT_slt, t->slot);
        SET(q, KTB_AT_sqn, t->sqn);
    }
    SET(q, KTB_AT_uba_dba, k->uba[0]);
    SET(q, KTB_AT_uba_seq, k->uba[1]);
    SET(q, KTB_AT_uba_rec, k->uba[2]);
    q += KTB_SIZE;
    if (k->op & KTB_CLEANOUT) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(k->entries);
        memset(q, 0, CLEANOUT_SIZE + (size_t)n * CLEANOUT_ENTRY_SIZE);
        SET(q, CLEANOUT_AT_scn, k->scn);
        SET(q, CLEANOUT_AT_n, n);
        q += CLEANOUT_SIZE;
        for (Py_ssize_t i = 0; i < n; i++) { /* checked by check_entries */
            PyObject *e = PySequence_Fast_GET_ITEM(k->entries, i);
            uint64_t x[3];
            for (int j = 0; j < 3; j++) as_u64(PyTuple_GET_ITEM(e, j), UINT64_MAX, &x[j]);
            SET(q, CLEANOUT_ENTRY_AT_itli, x[0]);
            SET(q, CLEANOUT_ENTRY_AT_flg, x[1]);
            SET(q, CLEANOUT_ENTRY_AT_scn, x[2]);
            q += CLEANOUT_ENTRY_SIZE;
        }
    }
    fld_end(v, q);
}

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

/* One row change. */
typedef struct {
    Tx tx;
    uint64_t scn, dba, slot;
    Ktb ktb;   /* the row block's */
    int begin; /* the transaction's first change */
} Change;

/* A 5.1 undo vector's head (redopack.undo_cv) with ``nfields`` fields in all: ktudb, ktub
   (a transaction's first undo record carries the begin flag and the logon user). */
static u8 *undo_head(Vec *v, u8 *q, const Change *c, const uint64_t uba[3], int begin,
                     unsigned layer, unsigned code, uint64_t obj, uint64_t dataobj, int nfields) {
    const Tx *t = &c->tx;
    vec_begin(v, q, 5, 1, t->cls + 1, UNDO_FILE, uba[0], OBJ_UNDO, c->scn, begin ? 2 : 1, 0,
              nfields);
    q = fld(v, KTUDB_SIZE);
    SET(q, KTUDB_AT_flg, begin ? BEGIN_FLG : FLG);
    SET(q, KTUDB_AT_usn, t->usn);
    SET(q, KTUDB_AT_slt, t->slot);
    SET(q, KTUDB_AT_sqn, t->sqn);
    SET(q, KTUDB_AT_seq, uba[1]);
    SET(q, KTUDB_AT_rec, uba[2]);
    fld_end(v, q + KTUDB_SIZE);
    q = fld(v, KTUB_SIZE);
    SET(q, KTUB_AT_objn, obj);
    SET(q, KTUB_AT_objd, dataobj);
    SET(q, KTUB_AT_tsn, TSN);
    SET(q, KTUB_AT_opc_layer, layer);
    SET(q, KTUB_AT_opc_code, code);
    SET(q, KTUB_AT_slt, t->slot);
    SET(q, KTUB_AT_rci, begin ? 0 : uba[2] - 1);
    SET(q, KTUB_AT_uflg, begin ? KTUB_BEGIN : 0);
    SET(q, KTUB_AT_logon_user, begin ? t->logon : 0);
    fld_end(v, q + KTUB_SIZE);
    return v->q;
}


/* A NULL bitmap of n values (bit i: value i is NULL), at q. */
static u8 *put_nulls(u8 *q, const Val *v, Py_ssize_t n) {
    size_t bytes = ((size_t)n + 7) / 8;
    memset(q, 0, bytes);
    for (Py_ssize_t i = 0; i < n; i++)
        if (v[i].n == NULL_LEN) q[i / 8] |= (u8)(1u << (i % 8));
    return q + bytes;
}

static void put_values(Vec *v, const Val *vals, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) fld_bytes(v, vals[i].p, len_of(&vals[i]));
}

/* The common part of a KDO field (redopack._kdo), ``size`` bytes zeroed first. */
static u8 *kdo_head(Vec *v, size_t size, unsigned op, uint64_t bdba, uint64_t hdba) {
    u8 *q = fld(v, size);
    SET(q, KDO_AT_bdba, bdba);
    SET(q, KDO_AT_hdba, hdba);
    SET(q, KDO_AT_op, op);
    SET(q, KDO_AT_itli, ITL);
    return q;
}

/* redopack.kdo_irp: the whole row (n columns, trailing NULLs cut) of ``size`` bytes. */
static void kdo_irp(Vec *v, const Table *self, const Change *c, unsigned lb, const Val *vals,
                    Py_ssize_t n, size_t size) {
    u8 *q = kdo_head(v, KDO_ROW_NULLS, KDO_IRP, c->dba, self->hdba);
    SET(q, KDO_ROW_AT_fb, FB);
    SET(q, KDO_ROW_AT_lb, lb);
    SET(q, KDO_ROW_AT_cc, n);
    SET(q, KDO_ROW_AT_size, size > KDO_SIZE_MAX ? KDO_SIZE_MAX : size);
    SET(q, KDO_ROW_AT_slot, c->slot);
    fld_end(v, put_nulls(q + KDO_ROW_NULLS, vals, n));
    put_values(v, vals, n);
}

static void kdo_drp(Vec *v, const Table *self, const Change *c) {
    u8 *q = kdo_head(v, KDO_SLOT_SIZE, KDO_DRP, c->dba, self->hdba);
    SET(q, KDO_SLOT_AT_slot, c->slot);
    fld_end(v, q + KDO_SLOT_SIZE);
}

/* redopack.kdo_urp: the columns ``nos`` set to ``vals``. */
static void kdo_urp(Vec *v, const Table *self, const Change *c, unsigned lock,
                    const unsigned *nos, const Val *vals, Py_ssize_t n) {
    u8 *q = kdo_head(v, KDO_URP_NULLS, KDO_URP, c->dba, self->hdba);
    SET(q, KDO_URP_AT_fb, KDO_FLAG);
    SET(q, KDO_URP_AT_lock, lock);
    SET(q, KDO_URP_AT_slot, c->slot);
    SET(q, KDO_URP_AT_ncol, self->ncols);
    SET(q, KDO_URP_AT_nnew, n);
    fld_end(v, put_nulls(q + KDO_URP_NULLS, vals, n));
    if (!n) return;
    q = fld(v, 0);
    for (Py_ssize_t i = 0; i < n; i++) q = put16(q, nos[i]);
    fld_end(v, q);
    put_values(v, vals, n);
}

/* redopack.supplemental: the key column's before image. */
static void supplemental(Vec *v, const Table *self, const Val *key) {
    u8 *q = fld(v, SUPP_SIZE);
    SET(q, SUPP_AT_type, SUPP_TYPE);
    SET(q, SUPP_AT_fb, FB);
    SET(q, SUPP_AT_cc, 1);
    fld_end(v, q + SUPP_SIZE);
    fld_end(v, put16(fld(v, 0), (uint64_t)self->key_col + 1));
    fld_end(v, put16(fld(v, 0), len_of(key)));
    fld_bytes(v, key->p, len_of(key));
}

static void index_head(Vec *v, unsigned action, uint64_t sno, uint64_t row_size,
                       uint64_t indexid, uint64_t block) {
    u8 *q = fld(v, INDEX_SIZE);
    SET(q, INDEX_AT_action, action);
    SET(q, INDEX_AT_itl, ITL);
    SET(q, INDEX_AT_kdxlkflg, 0x1);
    SET(q, INDEX_AT_sno, sno);
    SET(q, INDEX_AT_row_size, row_size);
    SET(q, INDEX_AT_indexid, indexid);
    SET(q, INDEX_AT_block, block);
    fld_end(v, q + INDEX_SIZE);
}

/* 10.2 insert leaf row (the key and its ROWID) or 10.4 delete leaf row, KTB ``k``
   (redopack.leaf_cv), for the row at the change's block and slot. */
static u8 *leaf_cv(u8 *q, const Table *self, const Change *c, const Tx *t, const Ktb *k,
                   int insert, const u8 *ikey, size_t klen) {
    u8 keydata[KEYDATA] = {(u8)(c->dba >> 24), (u8)(c->dba >> 16), (u8)(c->dba >> 8), (u8)c->dba,
                           (u8)(c->slot >> 8), (u8)c->slot}; /* big-endian */
    Vec v;
    vec_begin(&v, q, 10, insert ? 2 : 4, 1, self->afn, self->leaf, self->idataobj, c->scn, 1, 0, 6);
    put_ktb(&v, t, k);
    index_head(&v, insert ? INDEX_INSERT : INDEX_DELETE, c->slot, klen + KEYDATA + 4, 0, 0);
    fld_bytes(&v, ikey, insert ? klen : 0);
    fld_bytes(&v, NULL, 0);
    fld_bytes(&v, NULL, 0);
    fld_bytes(&v, keydata, insert ? KEYDATA : 0);
    return v.q;
}

/* The index record (redopack.Table._index): [5.1 (10.22 undo), 10.2 | 10.4] for the row's
   key as the index stores it. */
static u8 *put_index(u8 *q, const Table *self, const Change *c, const Ktb *k, int insert,
                     const u8 *ikey, size_t klen) {
    u8 keydata[KEYDATA] = {(u8)(c->dba >> 24), (u8)(c->dba >> 16), (u8)(c->dba >> 8), (u8)c->dba,
                           (u8)(c->slot >> 8), (u8)c->slot}; /* big-endian */
    Vec v;
    q = undo_head(&v, q, c, k->uba, 0, 10, 22, self->iobj, self->idataobj, 8);
    put_ktb(&v, &c->tx, NULL);
    index_head(&v, insert ? INDEX_PURGE : INDEX_RESTORE, 0, 0, self->indexid, self->leaf);
    fld_bytes(&v, ikey, klen);
    fld_bytes(&v, NULL, 0);
    fld_bytes(&v, NULL, 0);
    fld_bytes(&v, keydata, insert ? 0 : KEYDATA);
    return leaf_cv(v.q, self, c, &c->tx, k, insert, ikey, klen);
}

/* A key as the index stores it (redopack.index_key): 0xFF for NULL, else length + bytes. */
static size_t index_key(const Val *key, u8 ikey[256]) {
    ikey[0] = 0xFF;
    if (key->n == NULL_LEN) return 1;
    ikey[0] = (u8)key->n;
    putn(ikey + 1, key->p, len_of(key));
    return 1 + len_of(key);
}

/* ---- Table methods ------------------------------------------------------------------------- */
static int table_init(Table *self, PyObject *args, PyObject *kwds) {
    PyObject *shape, *kinds, *encoders, *index;
    static char *names[] = {"shape", "kinds", "encoders", NULL};
    uint64_t ncols, key_col;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OUO:Table", names, &shape, &kinds, &encoders))
        return -1;
    if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) != 7) {
        PyErr_SetString(PyExc_TypeError, "shape must be a redopack.Shape");
        return -1;
    }
    if (item_u64(shape, 0, UINT32_MAX, &self->obj) < 0 ||
        item_u64(shape, 1, UINT32_MAX, &self->dataobj) < 0 ||
        item_u64(shape, 2, 0xFFFF, &self->afn) < 0 || item_u64(shape, 3, UINT32_MAX, &self->hdba) < 0 ||
        item_u64(shape, 4, 0xFF, &ncols) < 0 || item_u64(shape, 5, 0xFFFF, &key_col) < 0)
        return -1;
    index = PyTuple_GET_ITEM(shape, 6);
    self->ncols = (Py_ssize_t)ncols;
    self->key_col = (Py_ssize_t)key_col;
    self->has_index = index != Py_None;
    if (self->has_index) {
        if (!PyTuple_Check(index) || PyTuple_GET_SIZE(index) != 4) {
            PyErr_SetString(PyExc_TypeError, "shape.index must be 4 integers or None");
            return -1;
        }
        if (item_u64(index, 0, UINT32_MAX, &self->iobj) < 0 ||
            item_u64(index, 1, UINT32_MAX, &self->idataobj) < 0 ||
            item_u64(index, 2, UINT32_MAX, &self->leaf) < 0 ||
            item_u64(index, 3, UINT32_MAX, &self->indexid) < 0)
            return -1;
    }
    PyObject *enc = PySequence_Tuple(encoders);
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

/* args: insert, delete (tx, scn, dba, slot, row); update (..., set_cols, row, new). */
static int read_values(const Table *self, int op, PyObject *const *args, Values *vs) {
    PyObject *row = NULL, *cols = NULL, *nw = NULL;
    int bad = -1;
    vs->n = vs->nset = 0;
    vs->heap = NULL;
    if ((row = PySequence_Fast(args[op == OP_UPDATE ? 5 : 4], "row must be a sequence")) == NULL)
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
    if ((cols = PySequence_Fast(args[4], "set_cols must be a sequence")) == NULL ||
        (nw = PySequence_Fast(args[6], "new must be a sequence")) == NULL)
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

/* insert, update, delete: (tx, scn, dba, slot, ...) -> the records' change vectors. */
static PyObject *row_change(Table *self, PyObject *const *args, Py_ssize_t nargs, int op) {
    static const char *names[] = {"insert", "update", "delete"};
    Change c;
    Values vs = {.n = 0, .heap = NULL};
    Buf b;
    PyObject *out = NULL;
    if (nargs != (op == OP_UPDATE ? 7 : 5)) {
        PyErr_Format(PyExc_TypeError, "%s() takes %d arguments (%zd given)", names[op],
                     op == OP_UPDATE ? 7 : 5, nargs);
        return NULL;
    }
    c.tx.blocks = NULL;
    c.ktb.entries = NULL;
    buf_init(&b);
    if (as_u64(args[1], (1ULL << 48) - 1, &c.scn) < 0 || as_u64(args[2], UINT32_MAX, &c.dba) < 0 ||
        as_u64(args[3], 0xFFFF, &c.slot) < 0)
        return NULL;
    /* the values first: a value the Python path would refuse changes nothing */
    if (read_values(self, op, args, &vs) < 0) goto out;
    Val *v = vals(&vs), *key = op == OP_UPDATE ? &v[2 * vs.nset] : &v[self->key_col];
    int index = self->has_index && op != OP_UPDATE;
    size_t bytes = 0;
    for (Py_ssize_t i = 0; i < vs.n; i++) {
        if (v[i].n > MAX_FIELD) {
            PyErr_Format(PyExc_ValueError, "a value of %zd bytes is more than a field holds",
                         v[i].n);
            goto out;
        }
        bytes += len_of(&v[i]);
    }
    if (index && key->n > 255) { /* its index form is length-prefixed (redopack.index_key) */
        PyErr_SetString(PyExc_ValueError, "bytes must be in range(0, 256)");
        goto out;
    }
    Py_ssize_t count = vs.n;
    size_t size = 3;
    if (op != OP_UPDATE) { /* rg.row_size of the row, trailing NULLs cut */
        while (count && v[count - 1].n == NULL_LEN) count--;
        size_t piece = PIECE_HEAD; /* rows.piece_bytes: length bytes 1, or 3 from 250 on */
        for (Py_ssize_t i = 0; i < count; i++) {
            size += 1 + len_of(&v[i]);
            piece += len_of(&v[i]) + (v[i].n >= 250 ? 3 : 1);
        }
        if (op == OP_INSERT && piece > PIECE_ROOM) { /* chained: Table.insert_pieces (Python) */
            out = PyTuple_New(0);
            goto out;
        }
    }
    if (tx_read(args[0], &c.tx) < 0) goto out;
    c.begin = !c.tx.started;
    uint64_t slot_uba[3] = {0, 0, 0};
    if (c.begin) { /* the 5.2 slot allocation points at the undo record to come */
        slot_uba[0] = undo_dba(&c.tx, c.tx.undo_seq);
        slot_uba[1] = c.tx.undo_seq;
        slot_uba[2] = c.tx.rec + 1;
        if (PyObject_SetAttr(c.tx.ids, s_started, Py_True) < 0) goto out;
    }
    if (choose_ktb(&c.tx, c.dba, c.scn, &c.ktb) < 0 || check_entries(&c.ktb) < 0) goto out;

    /* the row record: [5.2], 5.1 row undo, 11.x row redo, [5.20] */
    size_t session = (size_t)PyBytes_GET_SIZE(c.tx.session);
    size_t room = VEC_ROOM(2, KTUDH_SIZE + 4) + 2 * VEC_ROOM(8 + 2 * (size_t)vs.n, 0) +
                  2 * (bytes + 128 + 4 * (size_t)vs.n) + ktb_room(&c.ktb) + 512 + session;
    u8 *q = need(&b, room);
    if (q == NULL) goto out;
    const Tx *t = &c.tx;
    Vec vec;
    if (c.begin) {
        vec_begin(&vec, q, 5, 2, t->cls, UNDO_FILE, t->header_dba, OBJ_UNDO, c.scn, 1, 0, 2);
        u8 *f = fld(&vec, KTUDH_SIZE);
        SET(f, KTUDH_AT_slt, t->slot);
        SET(f, KTUDH_AT_sqn, t->sqn);
        SET(f, KTUDH_AT_uba_dba, slot_uba[0]);
        SET(f, KTUDH_AT_uba_seq, slot_uba[1]);
        SET(f, KTUDH_AT_uba_rec, slot_uba[2]);
        SET(f, KTUDH_AT_flg, BEGIN_FLG);
        fld_end(&vec, f + KTUDH_SIZE);
        fld_end(&vec, fld(&vec, 4) + 4);
        q = vec.q;
    }
    const uint64_t *uba = c.ktb.uba;
    Py_ssize_t nset = vs.nset;
    /* undo: ktudb, ktub, KTB, the KDO's fields, supplemental: head, numbers, lengths, value */
    int nundo = 2 + 1 + 4 + (op == OP_INSERT ? 1 : op == OP_UPDATE ? (nset ? 2 + (int)nset : 1)
                                                                    : 1 + (int)count);
    int nredo = 1 + (op == OP_INSERT ? 1 + (int)count : op == OP_UPDATE ? (nset ? 2 + (int)nset : 1)
                                                                         : 1);
    q = undo_head(&vec, q, &c, uba, c.begin, 11, 1, self->obj, self->dataobj, nundo);
    put_ktb(&vec, t, NULL);
    if (op == OP_INSERT) kdo_drp(&vec, self, &c);
    else if (op == OP_UPDATE) kdo_urp(&vec, self, &c, 0, vs.cols, v, nset);
    else kdo_irp(&vec, self, &c, 0, v, count, size);
    supplemental(&vec, self, key);
    vec_begin(&vec, vec.q, 11, op == OP_INSERT ? KDO_IRP : op == OP_UPDATE ? KDO_URP : KDO_DRP, 1,
              self->afn, c.dba, self->dataobj, c.scn, 1, c.ktb.typ, nredo);
    put_ktb(&vec, t, &c.ktb);
    if (op == OP_INSERT) kdo_irp(&vec, self, &c, LB_REDO, v, count, size);
    else if (op == OP_UPDATE) kdo_urp(&vec, self, &c, 1, vs.cols, v + nset, nset);
    else kdo_drp(&vec, self, &c);
    q = vec.q;
    if (c.begin) q = putn(q, PyBytes_AS_STRING(c.tx.session), session);
    b.n = (size_t)(q - b.p);
    size_t first = b.n;

    /* the index record (insert, delete): [5.1 (10.22 undo), 10.2 | 10.4] */
    if (index) {
        Ktb leaf;
        u8 ikey[256];
        size_t klen = index_key(key, ikey);
        if (choose_ktb(&c.tx, self->leaf, 0, &leaf) < 0) goto out;
        if ((q = need(&b, 2 * VEC_ROOM(8, 0) + 256 + 2 * klen)) == NULL) goto out;
        b.n = (size_t)(put_index(q, self, &c, &leaf, op == OP_INSERT, ikey, klen) - b.p);
    }
    if (tx_write(&c.tx) < 0) goto out;
    if (index)
        out = Py_BuildValue("(y#y#)", b.p, (Py_ssize_t)first, b.p + first,
                            (Py_ssize_t)(b.n - first));
    else
        out = Py_BuildValue("(y#)", b.p, (Py_ssize_t)b.n);
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

static PyObject *table_undone(Table *self, PyObject *const *args, Py_ssize_t nargs);

static PyMethodDef table_methods[] = {
    {"insert", (PyCFunction)(void (*)(void))table_insert, METH_FASTCALL,
     "insert(tx, scn, dba, slot, row) -> the records' change vectors"},
    {"update", (PyCFunction)(void (*)(void))table_update, METH_FASTCALL,
     "update(tx, scn, dba, slot, set_cols, row, new) -> the record's change vectors"},
    {"delete", (PyCFunction)(void (*)(void))table_delete, METH_FASTCALL,
     "delete(tx, scn, dba, slot, row) -> the records' change vectors"},
    {"undone", (PyCFunction)(void (*)(void))table_undone, METH_FASTCALL,
     "undone(head, scn, uba, dba, slot, kind, values, key, nos) -> a compensation record"},
    {"encode", (PyCFunction)table_encode, METH_O,
     "encode(values) -> a row's SQLite values as Oracle bytes"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "engine._native.redopack.Table",
    .tp_basicsize = sizeof(Table),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Table(shape, kinds, encoders): one table's single-row changes in Oracle's redo.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)table_init,
    .tp_dealloc = (destructor)table_dealloc,
    .tp_methods = table_methods,
};

/* ---- module functions ------------------------------------------------------------------------ */
/* commit(head, scn, uba, rollback): the 5.4 (redopack.commit) that ends a transaction. */
static PyObject *commit(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    Change c;
    uint64_t uba[3];
    u8 out[VEC_ROOM(2, KTUCM_SIZE + KTUCF_SIZE)];
    if (nargs != 4 || !PyTuple_Check(args[2]) || PyTuple_GET_SIZE(args[2]) != 3) {
        PyErr_SetString(PyExc_TypeError, "commit(head: TxHead, scn, uba, rollback)");
        return NULL;
    }
    int rollback = PyObject_IsTrue(args[3]);
    if (rollback < 0 || head_read(args[0], &c.tx) < 0 ||
        as_u64(args[1], (1ULL << 48) - 1, &c.scn) < 0 ||
        item_u64(args[2], 0, UINT32_MAX, &uba[0]) < 0 || item_u64(args[2], 1, 0xFFFF, &uba[1]) < 0 ||
        item_u64(args[2], 2, 0xFF, &uba[2]) < 0)
        return NULL;
    const Tx *t = &c.tx;
    Vec v;
    vec_begin(&v, out, 5, 4, t->cls, UNDO_FILE, t->header_dba, OBJ_UNDO, c.scn, 1, 0, 2);
    u8 *q = fld(&v, KTUCM_SIZE);
    SET(q, KTUCM_AT_slt, t->slot);
    SET(q, KTUCM_AT_sqn, t->sqn);
    SET(q, KTUCM_AT_sta, COMMIT_STA);
    SET(q, KTUCM_AT_flg, COMMIT_FLG | (rollback ? ROLLBACK_FLAG : 0));
    fld_end(&v, q + KTUCM_SIZE);
    q = fld(&v, KTUCF_SIZE);
    SET(q, KTUCF_AT_uba_dba, uba[0]);
    SET(q, KTUCF_AT_uba_seq, uba[1]);
    SET(q, KTUCF_AT_uba_rec, uba[2]);
    fld_end(&v, q + KTUCF_SIZE);
    return PyBytes_FromStringAndSize((const char *)out, v.q - out);
}

/* A value given as Oracle bytes (bytes, or None for NULL). */
static int raw_value(PyObject *o, Val *v) {
    v->ref = NULL;
    v->p = v->small;
    v->n = NULL_LEN;
    if (o == Py_None) return 0;
    if (!PyBytes_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "a value must be bytes or None");
        return -1;
    }
    if (PyBytes_GET_SIZE(o) > MAX_FIELD) {
        PyErr_Format(PyExc_ValueError, "a value of %zd bytes is more than a field holds",
                     PyBytes_GET_SIZE(o));
        return -1;
    }
    v->p = (const u8 *)PyBytes_AS_STRING(o);
    v->n = PyBytes_GET_SIZE(o);
    return 0;
}

/* Table.undone(head, scn, uba, dba, slot, kind, values, key, nos): the compensation record
   of a row change rolled back (redopack.undone, its reference): [5.6, the inverse row op,
   the inverse index op], KTB C at ``uba``; ``kind`` "ins", "del" or "upd", ``values`` and
   ``key`` Oracle bytes. */
static PyObject *table_undone(Table *self, PyObject *const *args, Py_ssize_t nargs) {
    Change c;
    Ktb k = {OP_C, 0, {0, 0, 0}, NULL, 0};
    Val vals[LOCAL_VALUES], key;
    unsigned nos[LOCAL_VALUES];
    Buf b;
    PyObject *seq = NULL, *out = NULL, *nseq = NULL;
    if (nargs != 9 || !PyTuple_Check(args[2]) || PyTuple_GET_SIZE(args[2]) != 3 ||
        !PyUnicode_Check(args[5])) {
        PyErr_SetString(PyExc_TypeError,
                        "undone(head, scn, uba, dba, slot, kind, values, key, nos)");
        return NULL;
    }
    const char *kind = PyUnicode_AsUTF8(args[5]);
    if (kind == NULL || head_read(args[0], &c.tx) < 0 ||
        as_u64(args[1], (1ULL << 48) - 1, &c.scn) < 0 ||
        item_u64(args[2], 0, UINT32_MAX, &k.uba[0]) < 0 || item_u64(args[2], 1, 0xFFFF, &k.uba[1]) < 0 ||
        item_u64(args[2], 2, 0xFF, &k.uba[2]) < 0 || as_u64(args[3], UINT32_MAX, &c.dba) < 0 ||
        as_u64(args[4], 0xFFFF, &c.slot) < 0 || raw_value(args[7], &key) < 0)
        return NULL;
    int upd = strcmp(kind, "upd") == 0, ins = strcmp(kind, "ins") == 0;
    if (!upd && !ins && strcmp(kind, "del") != 0) {
        PyErr_Format(PyExc_ValueError, "kind %R: ins, del or upd", args[5]);
        return NULL;
    }
    if ((seq = PySequence_Fast(args[6], "values must be a sequence")) == NULL ||
        (nseq = PySequence_Fast(args[8], "nos must be a sequence")) == NULL)
        goto out;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    size_t bytes = 0;
    if (n > LOCAL_VALUES || n > self->ncols || (upd && PySequence_Fast_GET_SIZE(nseq) != n)) {
        PyErr_SetString(PyExc_ValueError, "values: too many, or not one a column set");
        goto out;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (raw_value(PySequence_Fast_GET_ITEM(seq, i), &vals[i]) < 0) goto out;
        bytes += len_of(&vals[i]);
        if (upd) {
            uint64_t no;
            if (as_u64(PySequence_Fast_GET_ITEM(nseq, i), 0xFF, &no) < 0) goto out;
            nos[i] = (unsigned)no;
        }
    }
    if (self->has_index && !upd && key.n > 255) {
        PyErr_SetString(PyExc_ValueError, "bytes must be in range(0, 256)");
        goto out;
    }
    Py_ssize_t count = n;
    size_t size = 3;
    while (!upd && count && vals[count - 1].n == NULL_LEN) count--;
    for (Py_ssize_t i = 0; !upd && i < count; i++) size += 1 + len_of(&vals[i]);
    buf_init(&b);
    u8 *q = need(&b, 3 * VEC_ROOM(8 + 2 * (size_t)n, 0) + 2 * bytes + 1024);
    if (q == NULL) {
        buf_free(&b);
        goto out;
    }
    const Tx *t = &c.tx;
    Vec v; /* 5.6: the undone change's ktub (opc 11.1), its transaction and undo address */
    vec_begin(&v, q, 5, 6, t->cls + 1, UNDO_FILE, k.uba[0], OBJ_UNDO, c.scn, 1, 0, 2);
    u8 *f = fld(&v, KTUB_SIZE);
    SET(f, KTUB_AT_objn, self->obj);
    SET(f, KTUB_AT_objd, self->dataobj);
    SET(f, KTUB_AT_opc_layer, 11);
    SET(f, KTUB_AT_opc_code, 1);
    fld_end(&v, f + KTUB_SIZE);
    f = fld(&v, UNDO_APPLIED_SIZE);
    SET(f, UNDO_APPLIED_AT_usn, t->usn);
    SET(f, UNDO_APPLIED_AT_slt, t->slot);
    SET(f, UNDO_APPLIED_AT_sqn, t->sqn);
    SET(f, UNDO_APPLIED_AT_uba_dba, k.uba[0]);
    SET(f, UNDO_APPLIED_AT_uba_seq, k.uba[1]);
    SET(f, UNDO_APPLIED_AT_uba_rec, k.uba[2]);
    fld_end(&v, f + UNDO_APPLIED_SIZE);
    unsigned op = upd ? KDO_URP : ins ? KDO_DRP : KDO_IRP;
    int nf = 1 + (upd ? (n ? 2 + (int)n : 1) : ins ? 1 : 1 + (int)count);
    vec_begin(&v, v.q, 11, op, 1, self->afn, c.dba, self->dataobj, c.scn, 1, 0, nf);
    put_ktb(&v, t, &k);
    if (upd) kdo_urp(&v, self, &c, 0, nos, vals, n);
    else if (ins) kdo_drp(&v, self, &c);
    else kdo_irp(&v, self, &c, 0, vals, count, size);
    q = v.q;
    if (!upd && self->has_index) {
        u8 ikey[256];
        size_t klen = index_key(&key, ikey);
        q = leaf_cv(q, self, &c, t, &k, !ins, ikey, klen);
    }
    out = PyBytes_FromStringAndSize((const char *)b.p, q - b.p);
    buf_free(&b);
out:
    Py_XDECREF(seq);
    Py_XDECREF(nseq);
    return out;
}

/* ---- blocks ---------------------------------------------------------------------------------- */
/* A field in the file's byte order (``big``: big-endian). */
static void set_in(u8 *q, size_t off, char code, uint64_t v, int big) {
    int n = code == 'B' ? 1 : code == 'H' ? 2 : code == 'I' ? 4 : 8;
    for (int i = 0; i < n; i++) q[off + (big ? n - 1 - i : i)] = (u8)(v >> (8 * i));
}
#define SET_IN(q, field, v, big) set_in((q), field, (uint64_t)(v), (big))

/* framing.checksum_fold of a block: the XOR of its 16-bit words in the file's byte order. */
static unsigned fold(const u8 *p, size_t n, int big) {
    uint64_t acc = 0, w;
    u8 b[8];
    for (size_t i = 0; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        acc ^= w;
    }
    memcpy(b, &acc, 8); /* bytewise XOR: the host's byte order does not matter */
    unsigned even = b[0] ^ b[2] ^ b[4] ^ b[6], odd = b[1] ^ b[3] ^ b[5] ^ b[7];
    return big ? even << 8 | odd : odd << 8 | even;
}

/* cut(stream, starts, first_block, sequence, block_size, big_endian) -> bytes: an LWN's
   record stream cut into whole blocks from block ``first_block`` (onlinelog.cut, its
   reference): block headers with the first record starting in each block (``starts``:
   offsets in the stream, ascending), zero padding, checksums (framing.seal). */
static PyObject *cut(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer stream;
    uint64_t first_block, sequence, bs;
    int big;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError,
                        "cut(stream, starts, first_block, sequence, block_size, big_endian)");
        return NULL;
    }
    if (as_u64(args[2], UINT32_MAX, &first_block) < 0 || as_u64(args[3], UINT32_MAX, &sequence) < 0 ||
        as_u64(args[4], 1 << 16, &bs) < 0 || (big = PyObject_IsTrue(args[5])) < 0)
        return NULL;
    if (bs < 2 * BLOCK_HEADER_SIZE || bs % 8) {
        PyErr_SetString(PyExc_ValueError, "a block size is a multiple of 8 bytes");
        return NULL;
    }
    PyObject *starts = PySequence_Fast(args[1], "starts must be a sequence");
    if (starts == NULL) return NULL;
    if (PyObject_GetBuffer(args[0], &stream, PyBUF_SIMPLE) < 0) {
        Py_DECREF(starts);
        return NULL;
    }
    size_t payload = (size_t)bs - BLOCK_HEADER_SIZE, len = (size_t)stream.len;
    size_t n = len ? (len + payload - 1) / payload : 1;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * bs));
    Py_ssize_t si = 0, ns = PySequence_Fast_GET_SIZE(starts);
    for (size_t k = 0; out != NULL && k < n; k++) {
        u8 *blk = (u8 *)PyBytes_AS_STRING(out) + k * bs;
        size_t lo = k * payload, have = len > lo ? len - lo : 0;
        if (have > payload) have = payload;
        memset(blk, 0, bs);
        putn(blk + BLOCK_HEADER_SIZE, (const u8 *)stream.buf + lo, have);
        uint64_t at = 0, first = 0;
        while (si < ns) {
            if (as_u64(PySequence_Fast_GET_ITEM(starts, si), UINT64_MAX, &at) < 0) {
                Py_CLEAR(out);
                break;
            }
            if (at >= lo) break;
            si++;
        }
        if (out == NULL) break;
        if (si < ns && at < lo + payload) first = at - lo + BLOCK_HEADER_SIZE;
        SET_IN(blk, BLOCK_HEADER_AT_signature, BLOCK_SIGNATURE, big);
        SET_IN(blk, BLOCK_HEADER_AT_block_type, BLOCK_TYPE_REDO, big);
        SET_IN(blk, BLOCK_HEADER_AT_block, first_block + k, big);
        SET_IN(blk, BLOCK_HEADER_AT_sequence, sequence, big);
        SET_IN(blk, BLOCK_HEADER_AT_first, FIRST_RECORD_FLAG | first, big);
        SET_IN(blk, BLOCK_HEADER_AT_checksum, fold(blk, (size_t)bs, big), big);
    }
    PyBuffer_Release(&stream);
    Py_DECREF(starts);
    return out;
}

/* gather(stream, starts, vectors, scn, subscn, vld, big_endian) -> None: one record
   appended to an LWN's record stream (onlinelog.OnlineLog.gather, its reference): the LWN
   header when the stream is empty (lwn_nst 1, the LWN's own fields written when it ends),
   else the record header, then the change vectors; its offset appended to ``starts``. */
static PyObject *gather(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t scn, subscn, vld;
    int big;
    if (nargs != 7 || !PyByteArray_Check(args[0]) || !PyList_Check(args[1]) ||
        !PyBytes_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "gather(stream: bytearray, starts: list, vectors: bytes, scn, subscn, "
                        "vld, big_endian)");
        return NULL;
    }
    if (as_u64(args[3], (1ULL << 48) - 1, &scn) < 0 || as_u64(args[4], 0xFFFF, &subscn) < 0 ||
        as_u64(args[5], 0xFF, &vld) < 0 || (big = PyObject_IsTrue(args[6])) < 0)
        return NULL;
    PyObject *stream = args[0];
    Py_ssize_t pos = PyByteArray_GET_SIZE(stream), n = PyBytes_GET_SIZE(args[2]);
    int first = pos == 0;
    Py_ssize_t hl = first ? LWN_HEADER_SIZE : RECORD_HEADER_SIZE;
    if (hl + n > UINT32_MAX) {
        PyErr_SetString(StructError, "a record too large");
        return NULL;
    }
    PyObject *at = PyLong_FromSsize_t(pos);
    if (at == NULL || PyList_Append(args[1], at) < 0 ||
        PyByteArray_Resize(stream, pos + hl + n) < 0) {
        Py_XDECREF(at);
        return NULL;
    }
    Py_DECREF(at);
    u8 *q = (u8 *)PyByteArray_AS_STRING(stream) + pos;
    memset(q, 0, (size_t)hl);
    SET_IN(q, RECORD_HEADER_AT_size, hl + n, big);
    SET_IN(q, RECORD_HEADER_AT_vld, first ? vld | VLD_LWN : vld & ~(uint64_t)VLD_LWN, big);
    SET_IN(q, RECORD_HEADER_AT_scn_wrap, scn >> 32, big);
    SET_IN(q, RECORD_HEADER_AT_scn, scn & 0xFFFFFFFFu, big);
    SET_IN(q, RECORD_HEADER_AT_subscn, subscn, big);
    if (first) SET_IN(q, LWN_HEADER_AT_lwn_nst, 1, big);
    putn(q + hl, PyBytes_AS_STRING(args[2]), (size_t)n);
    Py_RETURN_NONE;
}

/* row_pieces(rows) -> bytes: the rows of a QMI in one field (redopack.row_pieces, its
   reference): per row (a sequence of Oracle bytes or None, trailing NULLs cut) its flags
   (FB), lock byte 0 and column count, then each column length-prefixed (0xFF NULL; a
   length byte; 0xFE and a big-endian u16 from 250 bytes on). */
static PyObject *row_pieces(PyObject *module, PyObject *rows) {
    PyObject *seq = PySequence_Fast(rows, "rows must be a sequence"), *out = NULL;
    Buf b;
    if (seq == NULL) return NULL;
    buf_init(&b);
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *row = PySequence_Fast(PySequence_Fast_GET_ITEM(seq, i), "a row must be a sequence");
        if (row == NULL) goto out;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(row);
        while (n && PySequence_Fast_GET_ITEM(row, n - 1) == Py_None) n--;
        size_t room = 3;
        int bad = n > 255;
        if (bad) PyErr_SetString(PyExc_ValueError, "bytes must be in range(0, 256)");
        for (Py_ssize_t j = 0; !bad && j < n; j++) {
            PyObject *v = PySequence_Fast_GET_ITEM(row, j);
            if (v == Py_None) {
                room += 1;
            } else if (!PyBytes_Check(v)) {
                PyErr_SetString(PyExc_TypeError, "a value must be bytes or None");
                bad = 1;
            } else if (PyBytes_GET_SIZE(v) > 0xFFFF) {
                PyErr_SetString(StructError, "'H' format requires 0 <= number <= 65535");
                bad = 1;
            } else {
                room += 3 + (size_t)PyBytes_GET_SIZE(v);
            }
        }
        u8 *q = bad ? NULL : need(&b, room);
        if (q == NULL) {
            Py_DECREF(row);
            goto out;
        }
        *q++ = FB;
        *q++ = 0;
        *q++ = (u8)n;
        for (Py_ssize_t j = 0; j < n; j++) {
            PyObject *v = PySequence_Fast_GET_ITEM(row, j);
            if (v == Py_None) {
                *q++ = 0xFF;
                continue;
            }
            size_t k = (size_t)PyBytes_GET_SIZE(v);
            if (k < 0xFA) {
                *q++ = (u8)k;
            } else {
                *q++ = 0xFE;
                *q++ = (u8)(k >> 8);
                *q++ = (u8)k;
            }
            q = putn(q, PyBytes_AS_STRING(v), k);
        }
        b.n = (size_t)(q - b.p);
        Py_DECREF(row);
    }
    out = PyBytes_FromStringAndSize((const char *)b.p, (Py_ssize_t)b.n);
out:
    buf_free(&b);
    Py_DECREF(seq);
    return out;
}

static PyMethodDef module_methods[] = {
    {"commit", (PyCFunction)(void (*)(void))commit, METH_FASTCALL,
     "commit(head, scn, uba, rollback) -> the 5.4's change vector"},
    {"row_pieces", row_pieces, METH_O, "row_pieces(rows) -> a QMI's rows field"},
    {"gather", (PyCFunction)(void (*)(void))gather, METH_FASTCALL,
     "gather(stream, starts, vectors, scn, subscn, vld, big_endian): a record into an LWN"},
    {"cut", (PyCFunction)(void (*)(void))cut, METH_FASTCALL,
     "cut(stream, starts, first_block, sequence, block_size, big_endian) -> sealed blocks"},
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
    static const char *attrs[] = {"rec", "undo_seq", "started", "blocks", "last_uba"};
    PyObject **slots[] = {&s_rec, &s_undo_seq, &s_started, &s_blocks, &s_last_uba};
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
