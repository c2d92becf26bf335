;; The sample chain's fungible-token contract (account token.localnet), answering views as a
;; near-sdk contract built on near-contract-standards does.
;; State: "b" + account id -> balance, 16 bytes little-endian (u128); "t" -> total supply (u128).
;; ft_balance_of({"account_id": "..."}) and ft_total_supply() return the amount as a JSON string
;; of its decimal digits ("0" without a row); ft_metadata() returns a constant JSON object.
;; ft_transfer is a change method: it asks for predecessor_account_id first, which nearcore
;; prohibits in a view; the sample chain's generator applies its transfers itself.
;; Host functions come from `env` with nearcore's signatures (u64 everywhere).
(module
  (import "env" "input" (func $input (param i64)))
  (import "env" "register_len" (func $register_len (param i64) (result i64)))
  (import "env" "read_register" (func $read_register (param i64 i64)))
  (import "env" "storage_read" (func $storage_read (param i64 i64 i64) (result i64)))
  (import "env" "value_return" (func $value_return (param i64 i64)))
  (import "env" "panic_utf8" (func $panic_utf8 (param i64 i64)))
  (import "env" "predecessor_account_id" (func $predecessor_account_id (param i64)))
  ;; 0: key "t"; 8: the metadata; 256: near-sdk's text for bad arguments; 320: the member
  ;; name ft_balance_of reads; 352: ft_transfer's text; 1024: key "b" + account id;
  ;; 1152: a u128 as four 32-bit limbs; 1208..1251: the decimal text, written backwards;
  ;; page 1 (65536): the call's arguments.
  (memory (export "memory") 2)
  (data (i32.const 0) "t")
  (data (i32.const 8)
    "{\"spec\":\"ft-1.0.0\",\"name\":\"nearrpc Sample Token\",\"symbol\":\"NRS\",\"icon\":null,\"reference\":null,\"reference_hash\":null,\"decimals\":18}")
  (data (i32.const 256) "Failed to deserialize input from JSON.")
  (data (i32.const 320) "account_id")
  (data (i32.const 352) "ft_transfer is applied by the sample chain's generator, not executed")
  (global $end (mut i32) (i32.const 0))
  (global $text (mut i32) (i32.const 0))
  (global $text_len (mut i32) (i32.const 0))

  (func $bad_input
    (call $panic_utf8 (i64.const 38) (i64.const 256))
    (unreachable))

  ;; the byte at p, or -1 past the end of the arguments
  (func $byte (param $p i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $p) (global.get $end))
      (then (i32.load8_u (local.get $p)))
      (else (i32.const -1))))

  (func $skip_ws (param $p i32) (result i32)
    (local $c i32)
    (block $done
      (loop $more
        (local.set $c (call $byte (local.get $p)))
        (br_if $done
          (i32.eqz
            (i32.or
              (i32.or (i32.eq (local.get $c) (i32.const 32)) (i32.eq (local.get $c) (i32.const 9)))
              (i32.or (i32.eq (local.get $c) (i32.const 10)) (i32.eq (local.get $c) (i32.const 13))))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $more)))
    (local.get $p))

  (func $expect (param $p i32) (param $c i32) (result i32)
    (if (i32.ne (call $byte (local.get $p)) (local.get $c)) (then (call $bad_input)))
    (i32.add (local.get $p) (i32.const 1)))

  ;; a JSON string without escapes at p: its bytes go to $text/$text_len; returns the end
  (func $string (param $p i32) (result i32)
    (local $c i32)
    (local.set $p (call $expect (local.get $p) (i32.const 34)))
    (global.set $text (local.get $p))
    (block $closed
      (loop $more
        (local.set $c (call $byte (local.get $p)))
        (br_if $closed (i32.eq (local.get $c) (i32.const 34)))
        ;; the end of input, a control character or an escape
        (if (i32.or (i32.lt_s (local.get $c) (i32.const 32)) (i32.eq (local.get $c) (i32.const 92)))
          (then (call $bad_input)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $more)))
    (global.set $text_len (i32.sub (local.get $p) (global.get $text)))
    (i32.add (local.get $p) (i32.const 1)))

  (func $text_is_account_id_member (result i32)
    (local $i i32)
    (if (i32.ne (global.get $text_len) (i32.const 10)) (then (return (i32.const 0))))
    (loop $more
      (if (i32.ne (i32.load8_u (i32.add (global.get $text) (local.get $i)))
                  (i32.load8_u (i32.add (i32.const 320) (local.get $i))))
        (then (return (i32.const 0))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $more (i32.lt_u (local.get $i) (i32.const 10))))
    (i32.const 1))

  ;; nearcore's account id characters: a-z, 0-9, '-', '_', '.'; 2 to 64 of them
  (func $check_account_id
    (local $i i32) (local $c i32)
    (if (i32.or (i32.lt_u (global.get $text_len) (i32.const 2)) (i32.gt_u (global.get $text_len) (i32.const 64)))
      (then (call $bad_input)))
    (loop $more
      (local.set $c (i32.load8_u (i32.add (global.get $text) (local.get $i))))
      (if (i32.eqz
            (i32.or
              (i32.or
                (i32.and (i32.ge_u (local.get $c) (i32.const 97)) (i32.le_u (local.get $c) (i32.const 122)))
                (i32.and (i32.ge_u (local.get $c) (i32.const 48)) (i32.le_u (local.get $c) (i32.const 57))))
              (i32.or
                (i32.or (i32.eq (local.get $c) (i32.const 45)) (i32.eq (local.get $c) (i32.const 95)))
                (i32.eq (local.get $c) (i32.const 46)))))
        (then (call $bad_input)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $more (i32.lt_u (local.get $i) (global.get $text_len)))))

  ;; the arguments, {"account_id": "..."} (other string members are skipped); leaves the
  ;; account id in $text/$text_len
  (func $read_account_id_argument
    (local $len i64) (local $p i32) (local $found i32) (local $account i32) (local $account_len i32)
    (call $input (i64.const 0))
    (local.set $len (call $register_len (i64.const 0)))
    (if (i64.gt_u (local.get $len) (i64.const 65536)) (then (call $bad_input)))
    (call $read_register (i64.const 0) (i64.const 65536))
    (global.set $end (i32.add (i32.const 65536) (i32.wrap_i64 (local.get $len))))
    (local.set $p (call $skip_ws (call $expect (call $skip_ws (i32.const 65536)) (i32.const 123))))
    (loop $member
      (local.set $p (call $skip_ws (call $string (local.get $p))))
      (if (call $text_is_account_id_member)
        (then
          (if (local.get $found) (then (call $bad_input)))  ;; serde refuses a duplicate field
          (local.set $p (call $string (call $skip_ws (call $expect (local.get $p) (i32.const 58)))))
          (local.set $found (i32.const 1))
          (local.set $account (global.get $text))
          (local.set $account_len (global.get $text_len)))
        (else
          (local.set $p (call $string (call $skip_ws (call $expect (local.get $p) (i32.const 58)))))))
      (local.set $p (call $skip_ws (local.get $p)))
      (if (i32.eq (call $byte (local.get $p)) (i32.const 44))
        (then
          (local.set $p (call $skip_ws (i32.add (local.get $p) (i32.const 1))))
          (br $member))))
    (local.set $p (call $skip_ws (call $expect (local.get $p) (i32.const 125))))
    (if (i32.or (i32.ne (local.get $p) (global.get $end)) (i32.eqz (local.get $found)))
      (then (call $bad_input)))
    (global.set $text (local.get $account))
    (global.set $text_len (local.get $account_len))
    (call $check_account_id))

  ;; the u128 stored under the key, into the limbs at 1152 (zero without a row)
  (func $load_amount (param $key_len i64) (param $key_ptr i64)
    (i64.store (i32.const 1152) (i64.const 0))
    (i64.store (i32.const 1160) (i64.const 0))
    (if (i64.ne (call $storage_read (local.get $key_len) (local.get $key_ptr) (i64.const 1)) (i64.const 0))
      (then (call $read_register (i64.const 1) (i64.const 1152)))))

  ;; returns the u128 at 1152 as a JSON string: long division by 10 over 32-bit limbs
  (func $return_amount
    (local $at i32) (local $limb i32) (local $rem i64) (local $cur i64)
    (local.set $at (i32.const 1250))
    (i32.store8 (local.get $at) (i32.const 34))
    (loop $digits
      (local.set $rem (i64.const 0))
      (local.set $limb (i32.const 1164))
      (loop $limbs
        (local.set $cur
          (i64.or (i64.shl (local.get $rem) (i64.const 32)) (i64.load32_u (local.get $limb))))
        (i64.store32 (local.get $limb) (i64.div_u (local.get $cur) (i64.const 10)))
        (local.set $rem (i64.rem_u (local.get $cur) (i64.const 10)))
        (local.set $limb (i32.sub (local.get $limb) (i32.const 4)))
        (br_if $limbs (i32.ge_u (local.get $limb) (i32.const 1152))))
      (local.set $at (i32.sub (local.get $at) (i32.const 1)))
      (i32.store8 (local.get $at) (i32.add (i32.const 48) (i32.wrap_i64 (local.get $rem))))
      (br_if $digits
        (i64.ne (i64.or (i64.load (i32.const 1152)) (i64.load (i32.const 1160))) (i64.const 0))))
    (local.set $at (i32.sub (local.get $at) (i32.const 1)))
    (i32.store8 (local.get $at) (i32.const 34))
    (call $value_return
      (i64.extend_i32_u (i32.sub (i32.const 1251) (local.get $at)))
      (i64.extend_i32_u (local.get $at))))

  (func (export "ft_balance_of")
    (local $i i32)
    (call $read_account_id_argument)
    (i32.store8 (i32.const 1024) (i32.const 98))
    (loop $copy
      (i32.store8 (i32.add (i32.const 1025) (local.get $i))
        (i32.load8_u (i32.add (global.get $text) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $copy (i32.lt_u (local.get $i) (global.get $text_len))))
    (call $load_amount (i64.extend_i32_u (i32.add (global.get $text_len) (i32.const 1))) (i64.const 1024))
    (call $return_amount))

  (func (export "ft_total_supply")
    (call $load_amount (i64.const 1) (i64.const 0))
    (call $return_amount))

  (func (export "ft_metadata")
    (call $value_return (i64.const 129) (i64.const 8)))

  (func (export "ft_transfer")
    (call $predecessor_account_id (i64.const 0))
    (call $panic_utf8 (i64.const 68) (i64.const 352))
    (unreachable)))
