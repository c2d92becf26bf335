/* The host-call crossing in C: Wasmtime's "unchecked" host function callback, which turns a call
 * from wasm into one vectorcall of a Python handler, with the gas global read before it and set
 * after it, and no ctypes on the way (wasm_api.py keeps the ctypes crossing for a build without
 * this extension; both run the same handler, engine.py `_host_call`).
 *
 * Nothing here links against libwasmtime or includes its headers (the `wasmtime` wheel ships
 * none): the few types used are declared from the C API's ABI below, checked against the
 * package's own ctypes layouts at setup, and the functions come as addresses from Python
 * (`setup`), taken from the library the package loaded.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* wasmtime_val_raw_t: a 16-byte union; an i32 in the low four bytes, an i64 in the low eight */
typedef union {
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    unsigned char bytes[16];
    void *funcref;
} raw_value;

/* wasmtime_global_t: a store's id and three private words */
typedef struct {
    uint64_t store_id;
    uint32_t private1;
    uint32_t private2;
    uint32_t private3;
} global_ref;

/* wasmtime_val_t: a kind byte, then a 24-byte union at offset 8 */
typedef struct {
    uint8_t kind;
    union {
        int64_t i64;
        unsigned char bytes[24];
    } of;
} typed_value;

_Static_assert(sizeof(raw_value) == 16, "wasmtime_val_raw_t is 16 bytes");
_Static_assert(sizeof(global_ref) == 24, "wasmtime_global_t is 24 bytes");
_Static_assert(sizeof(typed_value) == 32 && offsetof(typed_value, of) == 8, "wasmtime_val_t's layout");

typedef void (*global_get_fn)(void *context, const global_ref *global, typed_value *out);
typedef void *(*global_set_fn)(void *context, const global_ref *global, const typed_value *value);
typedef void *(*trap_new_fn)(const char *message, size_t length);

#define MAX_PARAMS 16
#define KIND_I32 0
#define KIND_I64 1
#define NO_RESULT (-1)
static const char TRAP_MESSAGE[] = "python exception"; /* the package's own trampoline's text */

/* set once by `setup` */
static global_get_fn global_get;
static global_set_fn global_set;
static trap_new_fn trap_new;
static uint8_t i64_kind;
static PyObject *pending;      /* wasm_api._PENDING: a thread's failure carried out of wasm */
static PyObject *raised;       /* wasm_api._raised: a wasmtime_error_t address -> its exception */
static PyObject *failure_name; /* "failure" */

/* The call the thread runs: its crossing (handed to each handler), the store context and a copy
 * of the instance's gas global. Set by `enter` once the global exists, cleared by `leave`. */
static _Thread_local struct {
    PyObject *crossing;
    void *context;
    global_ref gas;
} current;

typedef struct {
    PyObject_HEAD
    PyObject *handler;
    int params;
    signed char kinds[MAX_PARAMS];
    int result;
} Host;

static int kind_of(PyObject *name) {
    if (PyUnicode_Check(name)) {
        if (PyUnicode_CompareWithASCIIString(name, "i64") == 0) return KIND_I64;
        if (PyUnicode_CompareWithASCIIString(name, "i32") == 0) return KIND_I32;
    }
    PyErr_Format(PyExc_ValueError, "a host function's value kind is i32 or i64, not %R", name);
    return -1;
}

static int Host_init(Host *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"handler", "params", "results", NULL};
    PyObject *handler, *params, *results;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!O!", names, &handler, &PyTuple_Type, &params, &PyTuple_Type,
                                     &results))
        return -1;
    if (!PyCallable_Check(handler)) {
        PyErr_SetString(PyExc_TypeError, "the handler is callable");
        return -1;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(params);
    if (count > MAX_PARAMS || PyTuple_GET_SIZE(results) > 1) {
        PyErr_SetString(PyExc_ValueError, "at most 16 parameters and one result");
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        int kind = kind_of(PyTuple_GET_ITEM(params, i));
        if (kind < 0) return -1;
        self->kinds[i] = (signed char)kind;
    }
    self->params = (int)count;
    self->result = NO_RESULT;
    if (PyTuple_GET_SIZE(results) == 1 && (self->result = kind_of(PyTuple_GET_ITEM(results, 0))) < 0) return -1;
    Py_INCREF(handler);
    Py_XSETREF(self->handler, handler);
    return 0;
}

static int Host_traverse(Host *self, visitproc visit, void *arg) {
    Py_VISIT(self->handler);
    return 0;
}

static int Host_clear(Host *self) {
    Py_CLEAR(self->handler);
    return 0;
}

static void Host_dealloc(Host *self) {
    PyObject_GC_UnTrack(self);
    Host_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Host_env(Host *self, void *closure) {
    (void)closure;
    return PyLong_FromVoidPtr(self);
}

static PyGetSetDef Host_getset[] = {
    {"env", (getter)Host_env, NULL, "the callback's env pointer: this object's address", NULL},
    {NULL},
};

static PyTypeObject HostType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "nearrpc.contracts._crossing.Host",
    .tp_basicsize = sizeof(Host),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A host function for the C callback: handler(crossing, caller, gas left, *arguments) -> "
              "(result, gas granted).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Host_init,
    .tp_traverse = (traverseproc)Host_traverse,
    .tp_clear = (inquiry)Host_clear,
    .tp_dealloc = (destructor)Host_dealloc,
    .tp_getset = Host_getset,
};

/* The raised Python exception, kept in `pending.failure` (as the ctypes crossing keeps it). */
static void stash_failure(void) {
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *failure = PyErr_GetRaisedException();
#else
    PyObject *type, *failure, *traceback;
    PyErr_Fetch(&type, &failure, &traceback);
    PyErr_NormalizeException(&type, &failure, &traceback);
    if (traceback != NULL && failure != NULL) PyException_SetTraceback(failure, traceback);
    Py_XDECREF(type);
    Py_XDECREF(traceback);
#endif
    if (failure == NULL) return;
    if (PyObject_SetAttr(pending, failure_name, failure) < 0) PyErr_Clear();
    Py_DECREF(failure);
}

/* A failed wasmtime_global_set's error as the package's exception, raised. */
static void raise_error(void *error) {
    PyObject *address = PyLong_FromVoidPtr(error);
    if (address == NULL) return;
    PyObject *exception = PyObject_CallOneArg(raised, address);
    Py_DECREF(address);
    if (exception == NULL) return;
    PyErr_SetObject((PyObject *)Py_TYPE(exception), exception);
    Py_DECREF(exception);
}

/* Runs the handler and writes its result; 0, or -1 with a Python exception raised. */
static int cross(Host *host, void *caller, raw_value *values) {
    if (current.crossing == NULL || host->handler == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a host call outside a call's crossing, or of an unset Host");
        return -1;
    }
    typed_value gas_left;
    global_get(current.context, &current.gas, &gas_left);
    /* the vectorcall's arguments, one slot before them free for the callee */
    PyObject *stack[4 + MAX_PARAMS];
    PyObject **args = stack + 1;
    int count = 3 + host->params, made = 1, status = -1;
    args[0] = current.crossing;
    if ((args[1] = PyLong_FromVoidPtr(caller)) == NULL) goto done;
    made = 2;
    if ((args[2] = PyLong_FromLongLong(gas_left.of.i64)) == NULL) goto done;
    made = 3;
    for (int i = 0; i < host->params; i++) {
        /* as unsigned 64-bit values: an i32 sign-extended first (the package's Val does) */
        uint64_t value = host->kinds[i] == KIND_I64 ? values[i].u64 : (uint64_t)(int64_t)values[i].i32;
        if ((args[3 + i] = PyLong_FromUnsignedLongLong(value)) == NULL) goto done;
        made++;
    }
    Py_INCREF(current.crossing); /* the handler may end the crossing (a nested call) */
    PyObject *crossing = current.crossing;
    PyObject *answer = PyObject_Vectorcall(host->handler, args, (size_t)count | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    Py_DECREF(crossing);
    if (answer == NULL) goto done;
    if (!PyTuple_CheckExact(answer) || PyTuple_GET_SIZE(answer) != 2) {
        PyErr_SetString(PyExc_TypeError, "a host call's handler returns (result, gas granted)");
        Py_DECREF(answer);
        goto done;
    }
    PyObject *result = PyTuple_GET_ITEM(answer, 0);
    unsigned long long granted = PyLong_AsUnsignedLongLongMask(PyTuple_GET_ITEM(answer, 1));
    if (granted == (unsigned long long)-1 && PyErr_Occurred()) {
        Py_DECREF(answer);
        goto done;
    }
    if (host->result != NO_RESULT) {
        if (result == Py_None) {
            PyErr_SetString(PyExc_AssertionError, "a host function with a result returns it");
            Py_DECREF(answer);
            goto done;
        }
        /* the result modulo its width (an i32 in the low four bytes, the rest left alone) */
        unsigned long long value = PyLong_AsUnsignedLongLongMask(result);
        if (value == (unsigned long long)-1 && PyErr_Occurred()) {
            Py_DECREF(answer);
            goto done;
        }
        if (host->result == KIND_I64)
            values[0].u64 = value;
        else
            values[0].u32 = (uint32_t)value;
    }
    Py_DECREF(answer);
    /* the gas left handed back to the module (its global is a signed i64) */
    typed_value set;
    memset(&set, 0, sizeof set);
    set.kind = i64_kind;
    set.of.i64 = (int64_t)granted;
    void *error = global_set(current.context, &current.gas, &set);
    if (error != NULL) {
        raise_error(error);
        goto done;
    }
    status = 0;
done:
    for (int i = 1; i < made; i++) Py_DECREF(args[i]);
    return status;
}

/* wasmtime_func_unchecked_callback_t */
static void *callback(void *env, void *caller, raw_value *values, size_t count) {
    (void)count;
    PyGILState_STATE gil = PyGILState_Ensure();
    void *trap = NULL;
    if (cross((Host *)env, caller, values) < 0) {
        stash_failure(); /* carried across the wasm frames, raised again where the call returns */
        trap = trap_new(TRAP_MESSAGE, sizeof TRAP_MESSAGE - 1);
    }
    PyGILState_Release(gil);
    return trap;
}

static void *address_of(PyObject *value) {
    void *address = PyLong_AsVoidPtr(value);
    if (address == NULL && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a function's address is not 0");
    return address;
}

static PyObject *setup(PyObject *module, PyObject *args, PyObject *kwargs) {
    (void)module;
    static char *names[] = {"pending", "raised", "global_get", "global_set", "trap_new", "layout", NULL};
    PyObject *pending_arg, *raised_arg, *get, *set, *trap;
    Py_ssize_t raw_size, global_size, val_size, val_offset;
    int kind;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOO(nnnni)", names, &pending_arg, &raised_arg, &get, &set,
                                     &trap, &raw_size, &global_size, &val_size, &val_offset, &kind))
        return NULL;
    if (raw_size != sizeof(raw_value) || global_size != sizeof(global_ref) || val_size != sizeof(typed_value) ||
        val_offset != offsetof(typed_value, of)) {
        PyErr_SetString(PyExc_ImportError, "the wasmtime package's value layouts differ from this extension's");
        return NULL;
    }
    void *get_address = address_of(get), *set_address, *trap_address;
    if (get_address == NULL || (set_address = address_of(set)) == NULL || (trap_address = address_of(trap)) == NULL)
        return NULL;
    global_get = (global_get_fn)get_address;
    global_set = (global_set_fn)set_address;
    trap_new = (trap_new_fn)trap_address;
    i64_kind = (uint8_t)kind;
    Py_INCREF(pending_arg);
    Py_XSETREF(pending, pending_arg);
    Py_INCREF(raised_arg);
    Py_XSETREF(raised, raised_arg);
    Py_RETURN_NONE;
}

static PyObject *enter(PyObject *module, PyObject *const *args, Py_ssize_t count) {
    (void)module;
    if (count != 3) {
        PyErr_SetString(PyExc_TypeError, "enter(crossing, context, gas global's address)");
        return NULL;
    }
    void *context = address_of(args[1]);
    if (context == NULL) return NULL;
    void *global = address_of(args[2]);
    if (global == NULL) return NULL;
    memcpy(&current.gas, global, sizeof current.gas);
    current.context = context;
    Py_INCREF(args[0]);
    Py_XSETREF(current.crossing, args[0]);
    Py_RETURN_NONE;
}

static PyObject *leave(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    current.context = NULL;
    memset(&current.gas, 0, sizeof current.gas);
    Py_CLEAR(current.crossing);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"setup", (PyCFunction)(void (*)(void))setup, METH_VARARGS | METH_KEYWORDS,
     "setup(pending, raised, global_get, global_set, trap_new, layout): the C API's functions (addresses), "
     "where failures go, and the package's layouts (raw value, global, value sizes, the value's union offset, "
     "the i64 kind) to check against."},
    {"enter", (PyCFunction)(void (*)(void))enter, METH_FASTCALL,
     "enter(crossing, context, global address): host calls on this thread hand `crossing` to their handlers and "
     "read and set this gas global (copied) in this store context."},
    {"leave", leave, METH_NOARGS, "leave(): host calls on this thread have no call (they fail)."},
    {NULL},
};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT,
    .m_name = "nearrpc.contracts._crossing",
    .m_doc = "Wasmtime's unchecked host function callback in C (wasm_api.py).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__crossing(void) {
    if (PyType_Ready(&HostType) < 0) return NULL;
    PyObject *module = PyModule_Create(&definition);
    if (module == NULL) return NULL;
    failure_name = PyUnicode_InternFromString("failure");
    PyObject *address = PyLong_FromVoidPtr((void *)callback);
    if (failure_name == NULL || address == NULL || PyModule_AddObject(module, "CALLBACK", address) < 0) {
        Py_XDECREF(address);
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(&HostType);
    if (PyModule_AddObject(module, "Host", (PyObject *)&HostType) < 0) {
        Py_DECREF(&HostType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
