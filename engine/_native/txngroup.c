/*
 * txngroup: engine/extract/txngroup.group_py in C, the per-change half of the miner's
 * close (which events of a redo range form which closed transaction or fragment).
 *
 * group(events, compact, fine_xids, rules, horizon, kinds) -> list of steps, exactly as
 * group_py gives them (see engine/extract/tasks/txngroup.py for what a step is):
 * - an event that travels alone is its own step (the same object);
 * - (-1, changes, end, rows, sessions, max_time, max_scn, table_ops) for a transaction
 *   closed in the range;
 * - (-2, changes, rows, sessions, refs, undone, table_ops) for a fragment.
 * ``events`` is a list of event tuples (engine/extract/miner.EVENT_FIELDS: kind 0, xid 1,
 * scn 5, time_us 7, io_type 8, table 9, ref 13, user 14, txn_name 15, record 17);
 * ``fine_xids`` and ``rules`` are containers (``in``); ``horizon`` an int or None; ``kinds``
 * the Kind values (ROW, BEGIN, COMMIT, ROLLBACK, SESSION, UNDO).
 *
 * Three passes over the events, each transaction's state in a C array indexed through one
 * dict lookup per event: which transactions close here (txngroup._closing), which become a
 * fragment and where it ends (_fragmenting), then the steps.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define FIELDS 18
#define CLOSED_TAG -1
#define FRAGMENT_TAG -2

/* closing pass */
#define BEGUN 1
#define ENDED 2
#define BLOCKED 4
/* fragmenting pass */
#define SPOILT 8
#define CUT 16
#define ROWS 32
#define F_ENDED 64

typedef struct {
    int flags;
    Py_ssize_t last; /* the fragment's last change (-1: none) */
    PyObject *held;  /* the changes gathered so far (a list), NULL before the first */
} Txn;

typedef struct {
    long row, begin, commit, rollback, session, undo;
} Kinds;

typedef struct {
    PyObject *table, *io; /* borrowed */
    Py_ssize_t n;
} Op;

static PyObject *field(PyObject *e, Py_ssize_t i) { return PyTuple_GET_ITEM(e, i); }

static int is_end(const Kinds *k, long kind) { return kind == k->commit || kind == k->rollback; }

static int above(PyObject *scn, long long horizon, int has_horizon) {
    if (!has_horizon) return 0;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(scn, &overflow);
    if (overflow) return overflow > 0; /* past 64 bits: above any horizon, or below */
    if (v == -1 && PyErr_Occurred()) return -1;
    return v > horizon;
}

/* (user, transaction name) of the 5.20s among ``events``, each once, in order. */
static PyObject *sessions_of(PyObject *events, const Kinds *k, const long *kinds) {
    PyObject *seen = NULL;
    Py_ssize_t n = PyList_GET_SIZE(events);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (kinds[i] != k->session) continue;
        PyObject *e = PyList_GET_ITEM(events, i);
        if (!seen && !(seen = PyDict_New())) return NULL;
        PyObject *pair = PyTuple_Pack(2, field(e, 14), field(e, 15));
        if (!pair || PyDict_SetItem(seen, pair, Py_None) < 0) {
            Py_XDECREF(pair);
            Py_DECREF(seen);
            return NULL;
        }
        Py_DECREF(pair);
    }
    if (!seen) return PyTuple_New(0);
    PyObject *keys = PyDict_Keys(seen);
    Py_DECREF(seen);
    if (!keys) return NULL;
    PyObject *out = PyList_AsTuple(keys);
    Py_DECREF(keys);
    return out;
}

/* (table, io, rows) of ``rows``, in order of first appearance (txngroup.table_ops). */
static PyObject *table_ops_of(PyObject *rows) {
    Py_ssize_t n = PyList_GET_SIZE(rows), m = 0, cap = 8;
    Op small[8], *ops = small;
    PyObject *out = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *r = PyList_GET_ITEM(rows, i), *t = field(r, 9), *io = field(r, 8);
        Py_ssize_t j = m - 1; /* the last one first: rows of one table and operation run */
        for (; j >= 0; j--) {
            if (ops[j].table == t && ops[j].io == io) break;
            int same = PyObject_RichCompareBool(ops[j].table, t, Py_EQ);
            if (same < 0) goto done;
            if (same) {
                same = PyObject_RichCompareBool(ops[j].io, io, Py_EQ);
                if (same < 0) goto done;
                if (same) break;
            }
        }
        if (j >= 0) {
            ops[j].n++;
            continue;
        }
        if (m == cap) {
            Op *grown = PyMem_Malloc(sizeof(Op) * (size_t)cap * 2);
            if (!grown) {
                PyErr_NoMemory();
                goto done;
            }
            memcpy(grown, ops, sizeof(Op) * (size_t)m);
            if (ops != small) PyMem_Free(ops);
            ops = grown;
            cap *= 2;
        }
        ops[m++] = (Op){t, io, 1};
    }
    out = PyTuple_New(m);
    if (!out) goto done;
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *count = PyLong_FromSsize_t(ops[j].n);
        PyObject *item = count ? PyTuple_Pack(3, ops[j].table, ops[j].io, count) : NULL;
        Py_XDECREF(count);
        if (!item) {
            Py_CLEAR(out);
            goto done;
        }
        PyTuple_SET_ITEM(out, j, item);
    }
done:
    if (ops != small) PyMem_Free(ops);
    return out;
}

/* The kinds of ``events`` (a list of checked event tuples), for the step builders. */
static long *kinds_of(PyObject *events) {
    Py_ssize_t n = PyList_GET_SIZE(events);
    long *kinds = PyMem_Malloc(sizeof(long) * (size_t)(n ? n : 1));
    if (!kinds) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        kinds[i] = PyLong_AsLong(field(PyList_GET_ITEM(events, i), 0));
        if (kinds[i] == -1 && PyErr_Occurred()) {
            PyMem_Free(kinds);
            return NULL;
        }
    }
    return kinds;
}

/* Keeps the largest of the ints seen (``at`` the object, ``value`` its value); -1 on an
 * error (an int past 64 bits: SCNs and times are not). */
typedef struct {
    PyObject *at;
    long long value;
} Max;

static long long as_ll(PyObject *v) { /* PyLong_AsLongLong goes through a byte array */
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow) PyErr_SetString(PyExc_OverflowError, "an SCN or a time past 64 bits");
    return overflow ? -1 : x;
}

static int see(Max *m, PyObject *v) {
    long long x = as_ll(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (!m->at || x > m->value) {
        m->at = v;
        m->value = x;
    }
    return 0;
}

/* (-1, changes, end, rows, sessions, max_time, max_scn, table_ops): txngroup._closed */
static PyObject *closed_step(PyObject *events, PyObject *end, const Kinds *k) {
    long *kinds = kinds_of(events);
    if (!kinds) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(events);
    PyObject *undone = NULL, *rows = NULL, *sessions = NULL, *ops = NULL, *step = NULL;
    Max max_time = {NULL, 0}, max_scn = {NULL, 0};
    if (see(&max_time, field(end, 7)) < 0 || see(&max_scn, field(end, 5)) < 0) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyList_GET_ITEM(events, i);
        if (see(&max_time, field(e, 7)) < 0 || see(&max_scn, field(e, 5)) < 0) goto done;
        if (kinds[i] != k->undo) continue;
        int truth = PyObject_IsTrue(field(e, 13));
        if (truth < 0) goto done;
        if (!truth) continue;
        if (!undone && !(undone = PySet_New(NULL))) goto done;
        if (PySet_Add(undone, field(e, 13)) < 0) goto done;
    }
    if (!(rows = PyList_New(0))) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (kinds[i] != k->row) continue;
        PyObject *e = PyList_GET_ITEM(events, i);
        if (undone) {
            int gone = PySet_Contains(undone, field(e, 13));
            if (gone < 0) goto done;
            if (gone) continue;
        }
        if (PyList_Append(rows, e) < 0) goto done;
    }
    if (!(sessions = sessions_of(events, k, kinds)) || !(ops = table_ops_of(rows))) goto done;
    step = Py_BuildValue("(iOOOOOOO)", CLOSED_TAG, events, end, rows, sessions, max_time.at,
                         max_scn.at, ops);
done:
    PyMem_Free(kinds);
    Py_XDECREF(undone);
    Py_XDECREF(rows);
    Py_XDECREF(sessions);
    Py_XDECREF(ops);
    return step;
}

/* (-2, changes, rows, sessions, refs, undone, table_ops): txngroup._fragment */
static PyObject *fragment_step(PyObject *events, const Kinds *k) {
    long *kinds = kinds_of(events);
    if (!kinds) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(events);
    PyObject *rows = NULL, *refs = NULL, *undone = NULL, *sessions = NULL, *ops = NULL;
    PyObject *step = NULL, *t = NULL;
    if (!(rows = PyList_New(0)) || !(undone = PyList_New(0))) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyList_GET_ITEM(events, i);
        if (kinds[i] == k->row) {
            if (PyList_Append(rows, e) < 0) goto done;
        } else if (kinds[i] == k->undo) {
            int truth = PyObject_IsTrue(field(e, 13));
            if (truth < 0 || (truth && PyList_Append(undone, field(e, 13)) < 0)) goto done;
        }
    }
    Py_ssize_t m = PyList_GET_SIZE(rows);
    if (!(refs = PyTuple_New(m))) goto done;
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *ref = field(PyList_GET_ITEM(rows, i), 13);
        Py_INCREF(ref);
        PyTuple_SET_ITEM(refs, i, ref);
    }
    if (!(t = PyList_AsTuple(undone))) goto done;
    if (!(sessions = sessions_of(events, k, kinds)) || !(ops = table_ops_of(rows))) goto done;
    step = Py_BuildValue("(iOOOOOO)", FRAGMENT_TAG, events, rows, sessions, refs, t, ops);
done:
    PyMem_Free(kinds);
    Py_XDECREF(rows);
    Py_XDECREF(refs);
    Py_XDECREF(undone);
    Py_XDECREF(t);
    Py_XDECREF(sessions);
    Py_XDECREF(ops);
    return step;
}

static int hold(Txn *x, PyObject *e) {
    if (!x->held && !(x->held = PyList_New(0))) return -1;
    return PyList_Append(x->held, e);
}

static PyObject *group(PyObject *mod, PyObject *args) {
    PyObject *events, *fine, *rules, *horizon_obj;
    int compact;
    Kinds k;
    if (!PyArg_ParseTuple(args, "O!pOOO(llllll)", &PyList_Type, &events, &compact, &fine, &rules,
                          &horizon_obj, &k.row, &k.begin, &k.commit, &k.rollback, &k.session,
                          &k.undo))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(events);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyList_GET_ITEM(events, i);
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) < FIELDS) {
            PyErr_Format(PyExc_TypeError, "event %zd is not a tuple of %d fields", i, FIELDS);
            return NULL;
        }
    }
    if (!compact) return PyList_GetSlice(events, 0, n);
    int has_horizon = horizon_obj != Py_None;
    long long horizon = 0;
    if (has_horizon) {
        horizon = PyLong_AsLongLong(horizon_obj);
        if (horizon == -1 && PyErr_Occurred()) return NULL;
    }

    PyObject *index = PyDict_New(), *out = NULL;
    Py_ssize_t *at = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(n ? n : 1));
    long *kind = PyMem_Malloc(sizeof(long) * (size_t)(n ? n : 1));
    Txn *txns = NULL;
    Py_ssize_t ntx = 0;
    if (!index || !at || !kind) {
        if (index) PyErr_NoMemory();
        goto done;
    }
    /* each transaction's number, in order of first change */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyList_GET_ITEM(events, i), *xid = field(e, 1);
        kind[i] = PyLong_AsLong(field(e, 0));
        if (kind[i] == -1 && PyErr_Occurred()) goto done;
        PyObject *got = PyDict_GetItemWithError(index, xid);
        if (got) {
            at[i] = PyLong_AsSsize_t(got);
            continue;
        }
        if (PyErr_Occurred()) goto done;
        PyObject *num = PyLong_FromSsize_t(ntx);
        if (!num || PyDict_SetItem(index, xid, num) < 0) {
            Py_XDECREF(num);
            goto done;
        }
        Py_DECREF(num);
        at[i] = ntx++;
    }
    txns = PyMem_Calloc((size_t)(ntx ? ntx : 1), sizeof(Txn));
    if (!txns) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t j = 0; j < ntx; j++) txns[j].last = -1;
    {   /* Bounded Recovery's transactions: never closed, never a fragment */
        PyObject *xid, *num;
        Py_ssize_t pos = 0;
        while (PyDict_Next(index, &pos, &xid, &num)) {
            int fine_one = PySequence_Contains(fine, xid);
            if (fine_one < 0) goto done;
            if (fine_one) txns[PyLong_AsSsize_t(num)].flags |= BLOCKED | SPOILT;
        }
    }
    /* which close here: every change from 5.2 to 5.4 in the range (txngroup._closing) */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyList_GET_ITEM(events, i);
        Txn *x = &txns[at[i]];
        long kd = kind[i];
        if (kd == k.begin) {
            if (x->flags & (BEGUN | ENDED)) x->flags |= BLOCKED;
            x->flags |= BEGUN;
        } else if (!(x->flags & BEGUN) || (x->flags & ENDED)) {
            x->flags |= BLOCKED;
        } else if (is_end(&k, kd)) {
            int up = above(field(e, 5), horizon, has_horizon);
            if (up < 0) goto done;
            if (up) x->flags |= BLOCKED;
            x->flags |= ENDED;
        } else if (kd == k.row) {
            int truth = PyObject_IsTrue(field(e, 17));
            if (truth < 0) goto done;
            if (!truth) x->flags |= BLOCKED;
        }
    }
    for (Py_ssize_t j = 0; j < ntx; j++)
        if ((txns[j].flags & (ENDED | BLOCKED)) == ENDED) txns[j].flags |= SPOILT;
    /* which become a fragment, to which change (txngroup._fragmenting) */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyList_GET_ITEM(events, i);
        Txn *x = &txns[at[i]];
        long kd = kind[i];
        if (x->flags & (SPOILT | CUT)) continue;
        int up = above(field(e, 5), horizon, has_horizon);
        if (up < 0) goto done;
        if (up) {
            x->flags |= CUT;
        } else if (is_end(&k, kd)) {
            x->flags |= F_ENDED;
        } else if ((x->flags & F_ENDED) ||
                   !(kd == k.row || kd == k.begin || kd == k.session || kd == k.undo)) {
            x->flags |= SPOILT;
        } else if (kd == k.row) {
            int truth = PyObject_IsTrue(field(e, 17));
            if (truth < 0) goto done;
            int ruled = truth ? PySequence_Contains(rules, field(e, 9)) : 0;
            if (ruled < 0) goto done;
            if (!truth || ruled) {
                x->flags |= SPOILT;
            } else {
                x->flags |= ROWS;
                x->last = i;
            }
        } else {
            x->last = i;
        }
    }
    /* the steps */
    if (!(out = PyList_New(0))) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyList_GET_ITEM(events, i), *step = NULL;
        Txn *x = &txns[at[i]];
        int closing = (x->flags & (ENDED | BLOCKED)) == ENDED;
        int fragment = !closing && x->last >= 0 && (x->flags & ROWS) && !(x->flags & SPOILT);
        if (closing) {
            if (!is_end(&k, kind[i])) {
                if (hold(x, e) < 0) goto fail;
                continue;
            }
            if (!x->held && !(x->held = PyList_New(0))) goto fail;
            step = closed_step(x->held, e, &k);
            Py_CLEAR(x->held);
        } else if (fragment && i <= x->last) {
            if (hold(x, e) < 0) goto fail;
            if (i < x->last) continue;
            step = fragment_step(x->held, &k);
            Py_CLEAR(x->held);
        } else {
            Py_INCREF(e);
            step = e;
        }
        if (!step) goto fail;
        int rc = PyList_Append(out, step);
        Py_DECREF(step);
        if (rc < 0) goto fail;
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    if (txns)
        for (Py_ssize_t j = 0; j < ntx; j++) Py_XDECREF(txns[j].held);
    PyMem_Free(txns);
    PyMem_Free(at);
    PyMem_Free(kind);
    Py_XDECREF(index);
    return out;
}

static PyMethodDef methods[] = {
    {"group", group, METH_VARARGS,
     "group(events, compact, fine_xids, rules, horizon, kinds) -> list of steps"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "txngroup",
    .m_doc = "Which events of a redo range form which closed transaction or fragment.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit_txngroup(void) { return PyModule_Create(&module); }
