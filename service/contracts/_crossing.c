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
#include <stdbool.h>
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

/* wasmtime_instance_t: a store's id and a private word */
typedef struct {
    uint64_t store_id;
    size_t private1;
} instance_ref;

/* wasmtime_extern_t: a kind byte, then a 24-byte union at offset 8 (a func, a global, a memory) */
typedef struct {
    uint8_t kind;
    union {
        global_ref global;
        unsigned char bytes[24];
    } of;
} extern_item;

_Static_assert(sizeof(instance_ref) == 16, "wasmtime_instance_t is 16 bytes");
_Static_assert(sizeof(extern_item) == 32 && offsetof(extern_item, of) == 8, "wasmtime_extern_t's layout");

typedef struct {
    PyObject_HEAD
    void *store; /* NULL once deleted */
    void *context;
    int instantiated;
    instance_ref instance;
    extern_item memory, gas, method, start, stack;
    int has_start, has_stack;
    int running; /* in its wasm now (instantiate or call): not to be deleted or entered again */
} Store;

/* The call the thread runs: its crossing (handed to each handler) and its store (held: a store
 * deleted while entered fails the host call instead of being read after it is freed). Set by
 * `enter` once the instance exists, cleared by `leave`. */
static _Thread_local struct {
    PyObject *crossing;
    Store *store;
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
    if (self->handler != NULL) { /* a linker may call it already: its shape never changes */
        PyErr_SetString(PyExc_TypeError, "a Host is initialised once");
        return -1;
    }
    if (!PyCallable_Check(handler)) {
        PyErr_SetString(PyExc_TypeError, "the handler is callable");
        return -1;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(params);
    if (count > MAX_PARAMS || PyTuple_GET_SIZE(results) > 1) {
        PyErr_SetString(PyExc_ValueError, "at most 16 parameters and one result");
        return -1;
    }
    signed char kinds[MAX_PARAMS];
    for (Py_ssize_t i = 0; i < count; i++) {
        int kind = kind_of(PyTuple_GET_ITEM(params, i));
        if (kind < 0) return -1;
        kinds[i] = (signed char)kind;
    }
    int result = NO_RESULT;
    if (PyTuple_GET_SIZE(results) == 1 && (result = kind_of(PyTuple_GET_ITEM(results, 0))) < 0) return -1;
    memcpy(self->kinds, kinds, (size_t)count);
    self->params = (int)count;
    self->result = result;
    Py_INCREF(handler);
    self->handler = handler;
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
    if (current.crossing == NULL || current.store == NULL || host->handler == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a host call outside a call's crossing, or of an unset Host");
        return -1;
    }
    /* held until the end: the handler may leave the crossing, enter another or delete a store */
    Store *store = current.store;
    Py_INCREF(store);
    if (store->store == NULL || !store->instantiated) {
        PyErr_SetString(PyExc_RuntimeError, "a host call whose store is deleted");
        Py_DECREF(store);
        return -1;
    }
    typed_value gas_left;
    global_get(store->context, &store->gas.of.global, &gas_left);
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
    long long granted = PyLong_AsLongLong(PyTuple_GET_ITEM(answer, 1));
    if ((granted == -1 && PyErr_Occurred()) || granted < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a host call grants no negative gas");
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
    if (store->store == NULL) { /* deleted by the handler */
        PyErr_SetString(PyExc_RuntimeError, "a host call's store was deleted during the call");
        goto done;
    }
    void *error = global_set(store->context, &store->gas.of.global, &set);
    if (error != NULL) {
        raise_error(error);
        goto done;
    }
    status = 0;
done:
    for (int i = 1; i < made; i++) Py_DECREF(args[i]);
    Py_DECREF(store);
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

/* ---- A call's store, made, instantiated, called and deleted in C (wasm_api.CallStore is the
 * ctypes one, where this extension is not built): the per-call sequence through ctypes cost
 * more than a short view's own work. */


typedef void *(*store_new_fn)(void *engine, void *data, void (*finalizer)(void *));
typedef void *(*store_context_fn)(void *store);
typedef void (*store_delete_fn)(void *store);
typedef void (*store_limiter_fn)(void *store, int64_t memory_size, int64_t table_elements, int64_t instances,
                                 int64_t tables, int64_t memories);
typedef void (*set_epoch_deadline_fn)(void *context, uint64_t ticks);
typedef void (*epoch_callback_fn)(void *store, void *callback, void *data, void (*finalizer)(void *));
typedef void *(*pre_instantiate_fn)(void *pre, void *context, instance_ref *instance, void **trap);
typedef bool (*export_get_fn)(void *context, const instance_ref *instance, const char *name, size_t length,
                              extern_item *item);
typedef void *(*call_unchecked_fn)(void *context, const void *func, raw_value *values, size_t count, void **trap);
typedef uint8_t *(*memory_data_fn)(void *context, const void *memory);
typedef size_t (*memory_data_size_fn)(void *context, const void *memory);

static struct {
    store_new_fn store_new;
    store_context_fn store_context;
    store_delete_fn store_delete;
    store_limiter_fn store_limiter;
    set_epoch_deadline_fn set_epoch_deadline;
    epoch_callback_fn epoch_deadline_callback;
    pre_instantiate_fn pre_instantiate;
    export_get_fn export_get;
    call_unchecked_fn call_unchecked;
    memory_data_fn memory_data;
    memory_data_size_fn memory_data_size;
} api;

static PyObject *trapped; /* wasm_api._trap: a wasm_trap_t address -> the package's Trap */
static uint8_t extern_kinds[3]; /* the func, global and memory kinds of wasmtime_extern_t */
#define EXTERN_FUNC 0
#define EXTERN_GLOBAL 1
#define EXTERN_MEMORY 2


static PyTypeObject StoreType;

/* Where a run into wasm failed: the host function's exception that ended it (carried out in
 * `pending.failure`), else its error or trap, raised as the package's exceptions; 0 when it
 * returned. As wasm_api.CallStore._raise. */
static int failed(void *error, void *trap) {
    if (error == NULL && trap == NULL) return 0;
    PyObject *failure = PyObject_GetAttr(pending, failure_name);
    if (failure == NULL) return -1;
    if (PyObject_SetAttr(pending, failure_name, Py_None) < 0) {
        Py_DECREF(failure);
        return -1;
    }
    PyObject *address = PyLong_FromVoidPtr(error != NULL ? error : trap);
    /* the exception owns the C object (and deletes it) even when the failure is raised instead */
    PyObject *exception = address == NULL ? NULL : PyObject_CallOneArg(error != NULL ? raised : trapped, address);
    Py_XDECREF(address);
    if (exception == NULL) {
        Py_DECREF(failure);
        return -1;
    }
    PyObject *chosen = failure != Py_None ? failure : exception;
    Py_INCREF(chosen);
    Py_DECREF(failure);
    Py_DECREF(exception);
    /* raised with its own traceback (the host function's frames), as `raise failure` does */
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(chosen)), chosen, PyException_GetTraceback(chosen));
    return -1;
}

static int clear_pending(void) { return PyObject_SetAttr(pending, failure_name, Py_None); }

static int64_t as_int64(PyObject *value, int *bad) {
    long long number = PyLong_AsLongLong(value);
    if (number == -1 && PyErr_Occurred()) *bad = 1;
    return (int64_t)number;
}

/* Store(engine, memory_size, table_elements, tables, epoch_deadline, epoch_callback) */
static PyObject *Store_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    if (api.store_new == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "setup() has not run");
        return NULL;
    }
    if ((kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) || PyTuple_GET_SIZE(args) != 6) {
        PyErr_SetString(PyExc_TypeError,
                        "Store(engine, memory_size, table_elements, tables, epoch_deadline, epoch_callback)");
        return NULL;
    }
    void *engine = PyLong_AsVoidPtr(PyTuple_GET_ITEM(args, 0));
    if (engine == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "the engine's address is not 0");
        return NULL;
    }
    /* the limits and the deadline: none negative (the limiter reads a negative limit as none) */
    int64_t numbers[4];
    for (int i = 0; i < 4; i++) {
        int bad = 0;
        numbers[i] = as_int64(PyTuple_GET_ITEM(args, 1 + i), &bad);
        if (bad) return NULL;
        if (numbers[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "a store's limits and epoch deadline are not negative");
            return NULL;
        }
    }
    int64_t memory_size = numbers[0], table_elements = numbers[1], tables = numbers[2], deadline = numbers[3];
    void *watch = PyLong_AsVoidPtr(PyTuple_GET_ITEM(args, 5));
    if (watch == NULL && PyErr_Occurred()) return NULL;
    Store *self = (Store *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->store = api.store_new(engine, NULL, NULL);
    self->context = api.store_context(self->store);
    /* the store's limits nearcore's runner sets: one instance, one memory (engine.py) */
    api.store_limiter(self->store, memory_size, table_elements, 1, tables, 1);
    if (watch != NULL) api.epoch_deadline_callback(self->store, watch, NULL, NULL);
    api.set_epoch_deadline(self->context, (uint64_t)deadline);
    return (PyObject *)self;
}

static void Store_delete_now(Store *self) {
    if (self->store != NULL) {
        api.store_delete(self->store);
        self->store = NULL;
        self->context = NULL;
        self->instantiated = 0;
    }
}

static void Store_dealloc(Store *self) {
    Store_delete_now(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int idle(Store *self) {
    if (self->running) {
        PyErr_SetString(PyExc_RuntimeError, "the store is running its wasm");
        return 0;
    }
    return 1;
}

static int live(Store *self, int instantiated) {
    if (self->store == NULL || (instantiated && !self->instantiated)) {
        PyErr_SetString(PyExc_RuntimeError, instantiated ? "the store has no instance" : "the store is deleted");
        return 0;
    }
    return 1;
}

static int look_up(Store *self, const char *name, size_t length, int kind, extern_item *item) {
    if (!api.export_get(self->context, &self->instance, name, length, item) || item->kind != extern_kinds[kind]) {
        PyErr_Format(PyExc_AssertionError, "the instance exports %.*s of its kind", (int)length, name);
        return -1;
    }
    return 0;
}

/* instantiate(pre, memory, gas, method, start or None) */
static PyObject *Store_instantiate(Store *self, PyObject *const *args, Py_ssize_t count) {
    if (count != 5) {
        PyErr_SetString(PyExc_TypeError, "instantiate(pre, memory, gas, method, start or None)");
        return NULL;
    }
    if (!live(self, 0) || !idle(self)) return NULL;
    if (self->instantiated) {
        PyErr_SetString(PyExc_RuntimeError, "the store has its instance already");
        return NULL;
    }
    void *pre = PyLong_AsVoidPtr(args[0]);
    if (pre == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "the InstancePre's address is not 0");
        return NULL;
    }
    const char *names[4];
    Py_ssize_t lengths[4];
    for (int i = 0; i < 4; i++) {
        if (i == 3 && args[4] == Py_None) break;
        if ((names[i] = PyUnicode_AsUTF8AndSize(args[1 + i], &lengths[i])) == NULL) return NULL;
    }
    if (clear_pending() < 0) return NULL;
    void *trap = NULL, *error;
    /* other threads run meanwhile (the epoch ticker among them); a host call takes the GIL back */
    self->running++;
    Py_BEGIN_ALLOW_THREADS
    error = api.pre_instantiate(pre, self->context, &self->instance, &trap);
    Py_END_ALLOW_THREADS
    self->running--;
    if (failed(error, trap) < 0) return NULL;
    self->has_start = args[4] != Py_None;
    self->has_stack = 0;
    if (look_up(self, names[0], (size_t)lengths[0], EXTERN_MEMORY, &self->memory) < 0 ||
        look_up(self, names[1], (size_t)lengths[1], EXTERN_GLOBAL, &self->gas) < 0 ||
        look_up(self, names[2], (size_t)lengths[2], EXTERN_FUNC, &self->method) < 0 ||
        (self->has_start && look_up(self, names[3], (size_t)lengths[3], EXTERN_FUNC, &self->start) < 0))
        return NULL;
    self->instantiated = 1;
    Py_RETURN_NONE;
}

/* call(start): the start function (True) or the method, `() -> ()` */
static PyObject *Store_call(Store *self, PyObject *start) {
    if (!live(self, 1) || !idle(self)) return NULL;
    int which = PyObject_IsTrue(start);
    if (which < 0) return NULL;
    if (which && !self->has_start) {
        PyErr_SetString(PyExc_RuntimeError, "the instance has no start function");
        return NULL;
    }
    if (clear_pending() < 0) return NULL;
    void *trap = NULL, *error;
    const void *func = which ? self->start.of.bytes : self->method.of.bytes;
    self->running++;
    Py_BEGIN_ALLOW_THREADS
    error = api.call_unchecked(self->context, func, NULL, 0, &trap);
    Py_END_ALLOW_THREADS
    self->running--;
    if (failed(error, trap) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *read_global(Store *self, const global_ref *global) {
    typed_value value;
    global_get(self->context, global, &value);
    return PyLong_FromLongLong(value.of.i64);
}

static PyObject *Store_get(Store *self, PyObject *unused) {
    (void)unused;
    if (!live(self, 1)) return NULL;
    return read_global(self, &self->gas.of.global);
}

static PyObject *Store_set(Store *self, PyObject *value) {
    if (!live(self, 1)) return NULL;
    typed_value set;
    memset(&set, 0, sizeof set);
    set.kind = i64_kind;
    set.of.i64 = PyLong_AsLongLong(value);
    if (set.of.i64 == -1 && PyErr_Occurred()) return NULL;
    void *error = global_set(self->context, &self->gas.of.global, &set);
    if (error != NULL) {
        raise_error(error);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* stack(name): the stack global's value (instrument.py), looked up at the first ask */
static PyObject *Store_stack(Store *self, PyObject *name) {
    if (!live(self, 1)) return NULL;
    if (!self->has_stack) {
        Py_ssize_t length;
        const char *text = PyUnicode_AsUTF8AndSize(name, &length);
        if (text == NULL || look_up(self, text, (size_t)length, EXTERN_GLOBAL, &self->stack) < 0) return NULL;
        self->has_stack = 1;
    }
    return read_global(self, &self->stack.of.global);
}

static PyObject *Store_memory_size(Store *self, PyObject *unused) {
    (void)unused;
    if (!live(self, 1)) return NULL;
    return PyLong_FromSize_t(api.memory_data_size(self->context, self->memory.of.bytes));
}

static PyObject *Store_memory_base(Store *self, PyObject *unused) {
    (void)unused;
    if (!live(self, 1)) return NULL;
    return PyLong_FromVoidPtr(api.memory_data(self->context, self->memory.of.bytes));
}

static PyObject *Store_delete(Store *self, PyObject *unused) {
    (void)unused;
    if (!idle(self)) return NULL;
    Store_delete_now(self);
    Py_RETURN_NONE;
}

static PyObject *Store_bound(Store *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->instantiated);
}

static PyMethodDef Store_methods[] = {
    {"instantiate", (PyCFunction)(void (*)(void))Store_instantiate, METH_FASTCALL,
     "instantiate(pre, memory, gas, method, start or None): the InstancePre's (at address `pre`) instance, its "
     "exports of these names looked up; raises the package's Trap or WasmtimeError, or a host function's "
     "exception."},
    {"call", (PyCFunction)Store_call, METH_O,
     "call(start): run the start function (True) or the method; raises as instantiate does."},
    {"get", (PyCFunction)Store_get, METH_NOARGS, "get(): the gas global's value."},
    {"set", (PyCFunction)Store_set, METH_O, "set(value): set the gas global."},
    {"stack", (PyCFunction)Store_stack, METH_O, "stack(name): the value of the stack global exported as `name`."},
    {"memory_base", (PyCFunction)Store_memory_base, METH_NOARGS, "memory_base(): the memory's data address."},
    {"memory_size", (PyCFunction)Store_memory_size, METH_NOARGS, "memory_size(): the memory's size in bytes."},
    {"delete", (PyCFunction)Store_delete, METH_NOARGS, "delete(): delete the store (again: nothing)."},
    {NULL},
};

static PyGetSetDef Store_getset[] = {
    {"bound", (getter)Store_bound, NULL, "whether the store has its instance (and its gas global)", NULL},
    {NULL},
};

static PyTypeObject StoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "nearrpc.contracts._crossing.Store",
    .tp_basicsize = sizeof(Store),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One call's store: Store(engine, memory_size, table_elements, tables, epoch_deadline, "
              "epoch_callback address or 0).",
    .tp_new = Store_new,
    .tp_dealloc = (destructor)Store_dealloc,
    .tp_methods = Store_methods,
    .tp_getset = Store_getset,
};

static void *address_of(PyObject *value) {
    void *address = PyLong_AsVoidPtr(value);
    if (address == NULL && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a function's address is not 0");
    return address;
}

/* the C API's functions a store needs, by name, from `functions` */
static int take_functions(PyObject *functions) {
    static const char *const wanted[] = {"wasmtime_store_new", "wasmtime_store_context", "wasmtime_store_delete",
                                         "wasmtime_store_limiter", "wasmtime_context_set_epoch_deadline",
                                         "wasmtime_store_epoch_deadline_callback", "wasmtime_instance_pre_instantiate",
                                         "wasmtime_instance_export_get", "wasmtime_func_call_unchecked",
                                         "wasmtime_memory_data", "wasmtime_memory_data_size", "wasmtime_global_get",
                                         "wasmtime_global_set", "wasmtime_trap_new"};
    void *found[sizeof wanted / sizeof wanted[0]];
    if (!PyDict_Check(functions)) {
        PyErr_SetString(PyExc_TypeError, "the functions are a dict of names to addresses");
        return -1;
    }
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
        PyObject *value = PyDict_GetItemString(functions, wanted[i]);
        if (value == NULL) {
            PyErr_Format(PyExc_KeyError, "the functions have no %s", wanted[i]);
            return -1;
        }
        if ((found[i] = address_of(value)) == NULL) return -1;
    }
    /* casts from object to function pointers: the C API's functions have these prototypes */
    api.store_new = (store_new_fn)found[0];
    api.store_context = (store_context_fn)found[1];
    api.store_delete = (store_delete_fn)found[2];
    api.store_limiter = (store_limiter_fn)found[3];
    api.set_epoch_deadline = (set_epoch_deadline_fn)found[4];
    api.epoch_deadline_callback = (epoch_callback_fn)found[5];
    api.pre_instantiate = (pre_instantiate_fn)found[6];
    api.export_get = (export_get_fn)found[7];
    api.call_unchecked = (call_unchecked_fn)found[8];
    api.memory_data = (memory_data_fn)found[9];
    api.memory_data_size = (memory_data_size_fn)found[10];
    global_get = (global_get_fn)found[11];
    global_set = (global_set_fn)found[12];
    trap_new = (trap_new_fn)found[13];
    return 0;
}

static PyObject *setup(PyObject *module, PyObject *args, PyObject *kwargs) {
    (void)module;
    static char *names[] = {"pending", "raised", "trapped", "functions", "layout", NULL};
    PyObject *pending_arg, *raised_arg, *trapped_arg, *functions;
    Py_ssize_t raw_size, global_size, val_size, val_offset, instance_size, extern_size, extern_offset;
    int kind, func_kind, global_kind, memory_kind;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOO(nnnninnniii)", names, &pending_arg, &raised_arg,
                                     &trapped_arg, &functions, &raw_size, &global_size, &val_size, &val_offset,
                                     &kind, &instance_size, &extern_size, &extern_offset, &func_kind, &global_kind,
                                     &memory_kind))
        return NULL;
    if (raw_size != sizeof(raw_value) || global_size != sizeof(global_ref) || val_size != sizeof(typed_value) ||
        val_offset != offsetof(typed_value, of) || instance_size != sizeof(instance_ref) ||
        extern_size != sizeof(extern_item) || extern_offset != offsetof(extern_item, of)) {
        PyErr_SetString(PyExc_ImportError, "the wasmtime package's value layouts differ from this extension's");
        return NULL;
    }
    if (take_functions(functions) < 0) return NULL;
    i64_kind = (uint8_t)kind;
    extern_kinds[EXTERN_FUNC] = (uint8_t)func_kind;
    extern_kinds[EXTERN_GLOBAL] = (uint8_t)global_kind;
    extern_kinds[EXTERN_MEMORY] = (uint8_t)memory_kind;
    Py_INCREF(pending_arg);
    Py_XSETREF(pending, pending_arg);
    Py_INCREF(raised_arg);
    Py_XSETREF(raised, raised_arg);
    Py_INCREF(trapped_arg);
    Py_XSETREF(trapped, trapped_arg);
    Py_RETURN_NONE;
}

static PyObject *enter(PyObject *module, PyObject *const *args, Py_ssize_t count) {
    (void)module;
    if (count != 2 || !PyObject_TypeCheck(args[1], &StoreType)) {
        PyErr_SetString(PyExc_TypeError, "enter(crossing, store)");
        return NULL;
    }
    Store *store = (Store *)args[1];
    if (!live(store, 1)) return NULL;
    Py_INCREF(store);
    Py_XSETREF(current.store, store);
    Py_INCREF(args[0]);
    Py_XSETREF(current.crossing, args[0]);
    Py_RETURN_NONE;
}

static PyObject *leave(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    Py_CLEAR(current.store);
    Py_CLEAR(current.crossing);
    Py_RETURN_NONE;
}

/* An address as a positive int (else NULL with an exception). */
static void *memory_address(PyObject *number) {
    unsigned long long value = PyLong_AsUnsignedLongLong(number);
    if (value == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    if (value == 0) {
        PyErr_SetString(PyExc_ValueError, "a memory address is not 0");
        return NULL;
    }
    return (void *)(uintptr_t)value;
}

/* memory_read(address, length): `length` bytes at `address`, which the caller checked lie inside
   a call's linear memory (LinearMemory.holds); as ctypes.string_at, without its conversions. */
static PyObject *memory_read(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "memory_read(address, length)");
        return NULL;
    }
    void *address = memory_address(args[0]);
    if (address == NULL) return NULL;
    Py_ssize_t length = PyLong_AsSsize_t(args[1]);
    if (length == -1 && PyErr_Occurred()) return NULL;
    if (length < 0) {
        PyErr_SetString(PyExc_ValueError, "memory_read: a negative length");
        return NULL;
    }
    return PyBytes_FromStringAndSize((const char *)address, length);
}

/* memory_write(address, data): the bytes of `data` at `address`, checked by the caller as above. */
static PyObject *memory_write(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2 || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "memory_write(address, data: bytes)");
        return NULL;
    }
    void *address = memory_address(args[0]);
    if (address == NULL) return NULL;
    memcpy(address, PyBytes_AS_STRING(args[1]), (size_t)PyBytes_GET_SIZE(args[1]));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"memory_read", (PyCFunction)(void (*)(void))memory_read, METH_FASTCALL,
     "memory_read(address, length): the bytes at a checked range of a call's memory."},
    {"memory_write", (PyCFunction)(void (*)(void))memory_write, METH_FASTCALL,
     "memory_write(address, data): bytes written at a checked range of a call's memory."},
    {"setup", (PyCFunction)(void (*)(void))setup, METH_VARARGS | METH_KEYWORDS,
     "setup(pending, raised, trapped, functions, layout): where failures go and how errors and traps become "
     "exceptions, the C API's functions (names to addresses), and the package's layouts (raw value, global, "
     "value sizes, the value's union offset, the i64 kind, instance and extern sizes, the extern's union "
     "offset, the func, global and memory kinds) to check against."},
    {"enter", (PyCFunction)(void (*)(void))enter, METH_FASTCALL,
     "enter(crossing, store): host calls on this thread hand `crossing` to their handlers and read and set the "
     "store's gas global."},
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
    if (PyType_Ready(&HostType) < 0 || PyType_Ready(&StoreType) < 0) return NULL;
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
    Py_INCREF(&StoreType);
    if (PyModule_AddObject(module, "Store", (PyObject *)&StoreType) < 0) {
        Py_DECREF(&StoreType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
