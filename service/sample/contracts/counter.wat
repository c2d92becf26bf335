;; The sample chain's counter contract (account counter.localnet).
;; State: key "STATE" -> the count, 8 bytes little-endian (i64); absent reads as 0.
;; get_num (view) returns the count as a JSON number; increment, decrement and reset are
;; change methods (storage_write is prohibited in a view, as nearcore rules).
;; Host functions come from `env` with nearcore's signatures (u64 everywhere).
(module
  (import "env" "storage_read" (func $storage_read (param i64 i64 i64) (result i64)))
  (import "env" "storage_write" (func $storage_write (param i64 i64 i64 i64 i64) (result i64)))
  (import "env" "read_register" (func $read_register (param i64 i64)))
  (import "env" "value_return" (func $value_return (param i64 i64)))
  (memory (export "memory") 1)
  ;; 16: the state key; 64: the stored value; 128..160: the decimal text, written backwards
  (data (i32.const 16) "STATE")

  (func $load (result i64)
    (if (i64.eqz (call $storage_read (i64.const 5) (i64.const 16) (i64.const 0)))
      (then (return (i64.const 0))))
    (call $read_register (i64.const 0) (i64.const 64))
    (i64.load (i32.const 64)))

  (func $store (param $count i64)
    (i64.store (i32.const 64) (local.get $count))
    (drop (call $storage_write (i64.const 5) (i64.const 16) (i64.const 8) (i64.const 64) (i64.const 0))))

  (func (export "get_num")
    (local $n i64) (local $magnitude i64) (local $at i32)
    (local.set $n (call $load))
    ;; 0 - n as unsigned is the magnitude of a negative count (i64 minimum included)
    (local.set $magnitude
      (select (i64.sub (i64.const 0) (local.get $n)) (local.get $n) (i64.lt_s (local.get $n) (i64.const 0))))
    (local.set $at (i32.const 160))
    (loop $digits
      (local.set $at (i32.sub (local.get $at) (i32.const 1)))
      (i32.store8 (local.get $at)
        (i32.add (i32.const 48) (i32.wrap_i64 (i64.rem_u (local.get $magnitude) (i64.const 10)))))
      (local.set $magnitude (i64.div_u (local.get $magnitude) (i64.const 10)))
      (br_if $digits (i64.ne (local.get $magnitude) (i64.const 0))))
    (if (i64.lt_s (local.get $n) (i64.const 0))
      (then
        (local.set $at (i32.sub (local.get $at) (i32.const 1)))
        (i32.store8 (local.get $at) (i32.const 45))))
    (call $value_return
      (i64.extend_i32_u (i32.sub (i32.const 160) (local.get $at)))
      (i64.extend_i32_u (local.get $at))))

  (func (export "increment")
    (call $store (i64.add (call $load) (i64.const 1))))

  (func (export "decrement")
    (call $store (i64.sub (call $load) (i64.const 1))))

  (func (export "reset")
    (call $store (i64.const 0))))
