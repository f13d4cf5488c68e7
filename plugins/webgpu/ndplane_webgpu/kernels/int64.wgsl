// int64.wgsl: helpers for the 64-bit integer compute types i64 and u64 (wgpu feature
// "shader-int64"), pasted after common.wgsl into the shaders that name i64, u64 or f64 (float64
// needs u64 for its bits). The i64_* / u64_* functions are the 64-bit twins of common.wgsl's
// i_* / u_* ones; _codegen.widen() renames an op table's expression to them.
//
// A 64-bit element is two little-endian u32 words of an array<u32> binding. Notes on naga:
// bitcast<vec2<u32>>(u64 / i64 / f64) does not validate, so bits travel as one u64
// (bitcast<u64>(f64) works) split and joined with shifts; shift amounts are u32; 64-bit literals
// take the suffixes li / lu (an abstract literal in select() concretises to 32 bits).

fn u64_join(w: vec2<u32>) -> u64 { return u64(w.x) | (u64(w.y) << 32u); }
fn u64_split(v: u64) -> vec2<u32> { return vec2<u32>(u32(v), u32(v >> 32u)); }

// NOTE: as with u_mod, this is the only `%` on 64-bit operands (tests/test_codegen.py checks):
// signed remainders and divisions go through the unsigned magnitudes, never OpSRem / OpSDiv,
// which NVIDIA's driver miscomputes for negative operands (and OpSDiv overflows on MIN / -1).
fn u64_mod(a: u64, b: u64) -> u64 { return a % b; }
fn i64_uabs(a: i64) -> u64 { return select(bitcast<u64>(a), 0lu - bitcast<u64>(a), a < 0li); }

fn i64_floor_divide(a: i64, b: i64) -> i64 {
  if (b == 0li) { return 0li; }
  let ua = i64_uabs(a);
  let ub = i64_uabs(b);
  let q = ua / ub;
  if ((a < 0li) == (b < 0li)) { return bitcast<i64>(q); }  // MIN / -1 wraps to MIN, as NumPy
  return bitcast<i64>(0lu - q) - select(0li, 1li, u64_mod(ua, ub) != 0lu);
}
fn i64_remainder(a: i64, b: i64) -> i64 {
  if (b == 0li) { return 0li; }
  let r = bitcast<i64>(u64_mod(i64_uabs(a), i64_uabs(b)));  // < |b| <= 2^63: fits
  var t = select(r, -r, a < 0li);  // the truncated remainder, sign of a
  if (t != 0li && ((t < 0li) != (b < 0li))) { t = t + b; }
  return t;
}
fn u64_floor_divide(a: u64, b: u64) -> u64 { if (b == 0lu) { return 0lu; } return a / b; }
fn u64_remainder(a: u64, b: u64) -> u64 { if (b == 0lu) { return 0lu; } return u64_mod(a, b); }
fn i64_shl(a: i64, b: i64) -> i64 { if (bitcast<u64>(b) >= 64lu) { return 0li; } return a << u32(b); }
fn i64_shr(a: i64, b: i64) -> i64 {
  if (bitcast<u64>(b) >= 64lu) { return select(0li, -1li, a < 0li); }
  return a >> u32(b);
}
fn u64_shl(a: u64, b: u64) -> u64 { if (b >= 64lu) { return 0lu; } return a << u32(b); }
fn u64_shr(a: u64, b: u64) -> u64 { if (b >= 64lu) { return 0lu; } return a >> u32(b); }
fn i64_sign(x: i64) -> i64 { return select(select(0li, -1li, x < 0li), 1li, x > 0li); }
fn u64_pow(a: u64, b: u64) -> u64 {
  var n = b;
  var base = a;
  var r = 1lu;
  loop {
    if (n == 0lu) { break; }
    if ((n & 1lu) == 1lu) { r = r * base; }
    n = n >> 1u;
    base = base * base;
  }
  return r;
}
fn i64_pow(a: i64, b: i64) -> i64 {
  if (b < 0li) {
    if (a == 1li) { return 1li; }
    if (a == -1li) { return select(-1li, 1li, (b & 1li) == 0li); }
    return 0li;
  }
  return bitcast<i64>(u64_pow(bitcast<u64>(a), bitcast<u64>(b)));
}

// f32 -> 64-bit integers; NaN and out-of-range values give x86's (NumPy's) 0x8000000000000000.
fn f_to_i64(x: f32) -> i64 {
  if (f_isnan(x) || x >= 9223372036854775808.0 || x < -9223372036854775808.0) { return -9223372036854775807li - 1li; }
  return i64(x);
}
fn f_to_u64(x: f32) -> u64 {
  if (f_isnan(x) || x >= 18446744073709551616.0 || x < -9223372036854775808.0) { return 0x8000000000000000lu; }
  if (x >= 9223372036854775808.0) { return u64(x); }
  return bitcast<u64>(i64(x));
}
