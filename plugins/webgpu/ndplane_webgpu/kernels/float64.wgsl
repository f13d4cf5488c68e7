// float64.wgsl: helpers for the compute type f64 (wgpu features "shader-f64" and
// "shader-int64": the bits of an f64 travel as a u64), pasted after int64.wgsl, and before
// f64math.wgsl, into the shaders that name f64. The d_* functions are the float64 twins of
// common.wgsl's f_* ones that f64math.wgsl does not have; each float64 function is defined in
// one place only: the bit tests (f64_isnan, f64_isinf, f64_isfinite, f64_signbit, f64_nan,
// f64_inf), f64_copysign, f64_sign, f64_nextafter, the exact f64_fmod, f64_remainder,
// f64_floor_divide and f64_divmod, the transcendental ones (f64_exp, f64_atan2, ...) and f64_sqrt
// (lavapipe's sqrt is inexact on subnormals) live in f64math.wgsl, which every float64 shader
// gets with this file (its unused functions cost compile time only). _codegen.widen() renames
// f_X to d_X where this file defines d_X, else to f64_X. Only +, -, *, /, floor and bit
// operations are used here: Vulkan has no double-precision exp/log/sin (GLSL.std.450 defines
// them on 32 bits only). NaN and infinity tests look at the bits, as in common.wgsl.

fn d_nonzero(x: f64) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) != 0lu; }
fn d_abs(x: f64) -> f64 { return bitcast<f64>(bitcast<u64>(x) & 0x7ffffffffffffffflu); }
fn d_neg(x: f64) -> f64 { return bitcast<f64>(bitcast<u64>(x) ^ 0x8000000000000000lu); }

fn d_eq(a: f64, b: f64) -> bool { return !f64_isnan(a) && !f64_isnan(b) && a == b; }
fn d_lt(a: f64, b: f64) -> bool { return !f64_isnan(a) && !f64_isnan(b) && a < b; }
fn d_le(a: f64, b: f64) -> bool { return !f64_isnan(a) && !f64_isnan(b) && a <= b; }

fn d_maximum(a: f64, b: f64) -> f64 {
  if (f64_isnan(a)) { return a; }
  if (f64_isnan(b)) { return b; }
  return select(b, a, a > b);
}
fn d_minimum(a: f64, b: f64) -> f64 {
  if (f64_isnan(a)) { return a; }
  if (f64_isnan(b)) { return b; }
  return select(b, a, a < b);
}

// float64 -> integers with NumPy's (x86) results for NaN and out-of-range values: the 64-bit
// conversion's 0x8000000000000000, and to uint32 the low word of the conversion to int64.
fn d_to_i64(x: f64) -> i64 {
  if (f64_isnan(x) || x >= 9223372036854775808.0 || x < -9223372036854775808.0) { return -9223372036854775807li - 1li; }
  return i64(x);
}
fn d_to_u64(x: f64) -> u64 {
  if (f64_isnan(x) || x >= 18446744073709551616.0 || x < -9223372036854775808.0) { return 0x8000000000000000lu; }
  if (x >= 9223372036854775808.0) { return u64(x); }
  return bitcast<u64>(i64(x));
}
fn d_to_i32(x: f64) -> i32 {
  if (f64_isnan(x) || x >= 2147483648.0 || x < -2147483648.0) { return -2147483647 - 1; }
  return i32(x);
}
fn d_to_u32(x: f64) -> u32 { return u32(bitcast<u64>(d_to_i64(x))); }

// x rounded to f32 with round-to-odd (exact, else the neighbour towards zero with its last bit
// set): rounding that to binary16 (11 bits <= 24 - 2) is then the correct rounding of x, where
// f32_to_f16(f32(x)) would round twice.
fn d_to_f16_exact(x: f64) -> f32 {
  let r = f32(x);
  if (f64_isnan(x) || f64(r) == x || !f_isfinite(r)) { return r; }
  var b = bitcast<u32>(r);
  if (d_abs(f64(r)) > d_abs(x)) { b = b - 1u; }
  return bitcast<f32>(b | 1u);
}

// Order-preserving u64 image of an f64 for sorting: NaN largest, -0.0 == 0.0.
fn d_sortkey(x: f64) -> u64 {
  if (f64_isnan(x)) { return 0xfffffffffffffffflu; }
  var b = bitcast<u64>(x);
  if ((b & 0x7ffffffffffffffflu) == 0lu) { b = 0lu; }
  if ((b & 0x8000000000000000lu) != 0lu) { return ~b; }
  return b | 0x8000000000000000lu;
}
