/*
 * entries.h: a trail data area's column entries (big-endian: index, length = 4 + vlen,
 * null indicator, vlen, then vlen value bytes; indices increasing), read by rowscan.c
 * (scan, rows, select) and trailkit.c (select_records): the checks of one entry, and the
 * walk of an area for select's conditions (comparisons of a column with an integer).
 * Include after Python.h.
 */
#ifndef GGSCI_ENTRIES_H
#define GGSCI_ENTRIES_H

#include <stdint.h>
#include <string.h>

#define ENTRY 8
#define NULL_ABSENT 0x0000
#define NULL_PRESENT 0xFFFF

static unsigned ent16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }

static int flagged(const Py_buffer *mask, unsigned index) {
    return (Py_ssize_t)index < mask->len && ((const uint8_t *)mask->buf)[index] != 0;
}

static int entry(const uint8_t *b, Py_ssize_t pos, Py_ssize_t end, long last, unsigned *index,
                 unsigned *null, unsigned *vlen, Py_ssize_t *stop) {
    if (end - pos < ENTRY) return 0;
    unsigned length = ent16(b + pos + 2);
    *index = ent16(b + pos);
    *null = ent16(b + pos + 4);
    *vlen = ent16(b + pos + 6);
    *stop = pos + ENTRY + *vlen;
    return length == 4 + *vlen && (long)*index > last && *stop <= end;
}

#define MAX_CONDS 16
#define MAX_IOS 16
enum { OP_EQ, OP_NE, OP_LT, OP_GT, OP_LE, OP_GE };

/* One data area for select: checked as walk checks it (a malformed area: 1); the value
 * of each condition's column noted (found[c]: 0 no entry, 1 NULL, 2 digits in num[c], 3
 * anything else, or -1 a read value that is not UTF-8 or has a bad null indicator: 1);
 * the entries flagged in keep (when given) copied to out. utf8: read values not all
 * digits are checked to be UTF-8 (the before image, whose values are not compared). */
static int cond_area(const uint8_t *b, Py_ssize_t end, Py_ssize_t nconds, const long *cols,
                     int *found, long long *num, const Py_buffer *keep, uint8_t *out,
                     Py_ssize_t *out_len, int utf8) {
    Py_ssize_t pos = 0;
    long last = -1;
    for (Py_ssize_t c = 0; c < nconds; c++) found[c] = 0;
    while (pos < end) {
        unsigned index, null, vlen;
        Py_ssize_t stop;
        if (!entry(b, pos, end, last, &index, &null, &vlen, &stop)) return 1;
        for (Py_ssize_t c = 0; c < nconds; c++) {
            if (cols[c] != (long)index) continue;
            const uint8_t *v = b + pos + ENTRY;
            if (null == NULL_PRESENT && vlen == 0) {
                found[c] = 1;
            } else if (null != NULL_ABSENT) {
                return 1;
            } else {
                long long n = 0;
                unsigned k = 0;
                if (vlen > 0 && vlen <= 18)
                    for (; k < vlen && v[k] >= '0' && v[k] <= '9'; k++) n = n * 10 + (v[k] - '0');
                if (vlen > 0 && k == vlen) {
                    found[c] = 2;
                    num[c] = n;
                } else {
                    found[c] = 3;
                    if (utf8) {
                        PyObject *t = PyUnicode_DecodeUTF8((const char *)v, vlen, NULL);
                        if (!t) {
                            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) return -1;
                            PyErr_Clear();
                            return 1;
                        }
                        Py_DECREF(t);
                    }
                }
            }
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

static int holds(int op, long long a, long long b) {
    switch (op) {
    case OP_EQ: return a == b;
    case OP_NE: return a != b;
    case OP_LT: return a < b;
    case OP_GT: return a > b;
    case OP_LE: return a <= b;
    default: return a >= b;
    }
}

/* select's conditions, a tuple of (column index, op code, integer), into cols / ops /
 * lits; their number, or -1 with an exception set (more than MAX_CONDS, a bad op). */
static Py_ssize_t parse_conds(PyObject *conds, long *cols, int *ops, long long *lits) {
    Py_ssize_t nconds = PyTuple_GET_SIZE(conds);
    if (nconds > MAX_CONDS) {
        PyErr_SetString(PyExc_ValueError, "select: at most 16 conditions");
        return -1;
    }
    for (Py_ssize_t c = 0; c < nconds; c++) {
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(conds, c), "liL", &cols[c], &ops[c], &lits[c]))
            return -1;
        if (ops[c] < OP_EQ || ops[c] > OP_GE) {
            PyErr_SetString(PyExc_ValueError, "select: an op is 0 to 5");
            return -1;
        }
    }
    return nconds;
}

#endif
