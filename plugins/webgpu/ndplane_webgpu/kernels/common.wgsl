// common.wgsl: helpers pasted in front of every ndplane-webgpu kernel.
//
// Every device buffer is bound as array<u32> (array<atomic<u32>> when a kernel
// writes 8/16-bit elements); elements narrower than 32 bits live packed in
// little-endian words. Values are computed in one of three 32-bit "compute types":
// f32 (float16 and float32), i32 (int8..int32), u32 (uint8..uint32), or bool.
// float16 is stored as IEEE binary16 bits and converted exactly here (round to
// nearest even), so float16 math is float32 math rounded once, as in NumPy.
// NaN and infinity tests look at the bits: WGSL leaves NaN comparisons and
// min/max on NaN implementation-defined.

fn f_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn f_isinf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
fn f_isfinite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }
fn f_signbit(x: f32) -> bool { return (bitcast<u32>(x) >> 31u) != 0u; }
fn f_nonzero(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) != 0u; }
fn f_nan() -> f32 { return bitcast<f32>(0x7fc00000u); }
fn f_inf() -> f32 { return bitcast<f32>(0x7f800000u); }
fn f_abs(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0x7fffffffu); }
fn f_neg(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) ^ 0x80000000u); }
fn f_copysign(x: f32, y: f32) -> f32 {
  return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(y) & 0x80000000u));
}

fn f_eq(a: f32, b: f32) -> bool { return !f_isnan(a) && !f_isnan(b) && a == b; }
fn f_lt(a: f32, b: f32) -> bool { return !f_isnan(a) && !f_isnan(b) && a < b; }
fn f_le(a: f32, b: f32) -> bool { return !f_isnan(a) && !f_isnan(b) && a <= b; }

fn f_maximum(a: f32, b: f32) -> f32 {
  if (f_isnan(a)) { return a; }
  if (f_isnan(b)) { return b; }
  return select(b, a, a > b);
}
fn f_minimum(a: f32, b: f32) -> f32 {
  if (f_isnan(a)) { return a; }
  if (f_isnan(b)) { return b; }
  return select(b, a, a < b);
}

fn f_sign(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  return select(select(0.0, -1.0, x < 0.0), 1.0, x > 0.0);
}

// fmod with C semantics for finite operands (sign of a).
fn f_fmod(a: f32, b: f32) -> f32 {
  if (f_isnan(a) || f_isnan(b) || f_isinf(a) || b == 0.0) { return f_nan(); }
  if (f_isinf(b)) { return a; }
  let r = a - b * trunc(a / b);
  // NOTE: one correction step keeps |r| < |b| when a / b rounded up.
  if (f_abs(r) >= f_abs(b)) { return f_copysign(f_abs(r) - f_abs(b), a); }
  if (r != 0.0 && f_signbit(r) != f_signbit(a)) { return r + f_copysign(f_abs(b), a); }
  return r;
}

// NumPy npy_remainder: the sign of the divisor.
fn f_remainder(a: f32, b: f32) -> f32 {
  if (b == 0.0) { return f_nan(); }
  var m = f_fmod(a, b);
  if (f_isnan(m)) {
    if (f_isinf(b) && !f_isnan(a) && !f_isinf(a)) {
      m = a;
    } else {
      return m;
    }
  }
  if (m != 0.0) {
    if ((b < 0.0) != (m < 0.0)) { m = m + b; }
  } else {
    m = f_copysign(0.0, b);
  }
  return m;
}

// NumPy npy_floor_divide.
fn f_floor_divide(a: f32, b: f32) -> f32 {
  if (b == 0.0 || f_isnan(a) || f_isnan(b)) { return a / b; }
  if (f_isinf(a) || f_isinf(b)) { return floor(a / b); }
  let m = f_fmod(a, b);
  var d = (a - m) / b;
  if (m != 0.0 && ((b < 0.0) != (m < 0.0))) { d = d - 1.0; }
  if (d == 0.0) { return f_copysign(0.0, a / b); }
  var fd = floor(d);
  if (d - fd > 0.5) { fd = fd + 1.0; }
  return fd;
}

fn f_log1p(x: f32) -> f32 {
  if (f_isinf(x) && x > 0.0) { return x; }
  let u = 1.0 + x;
  if (u == 1.0) { return x; }
  return log(u) * (x / (u - 1.0));
}

fn f_expm1(x: f32) -> f32 {
  if (f_abs(x) < 1e-5) { return x + 0.5 * x * x; }
  let u = exp(x);
  if (u == 1.0) { return x; }
  let um1 = u - 1.0;
  if (um1 == -1.0) { return -1.0; }
  if (f_isinf(u)) { return u; }
  return um1 * (x / log(u));
}

fn f_log2(x: f32) -> f32 { return log2(x); }
fn f_log10(x: f32) -> f32 { return log(x) * 0.4342944819032518; }

fn f_sinh(x: f32) -> f32 {
  let ax = f_abs(x);
  var r: f32;
  if (ax > 88.0) {
    let h = exp(0.5 * ax);
    r = (0.5 * h) * h;
  } else {
    let t = f_expm1(ax);
    r = 0.5 * (t + t / (t + 1.0));
  }
  return f_copysign(r, x);
}
fn f_cosh(x: f32) -> f32 {
  let ax = f_abs(x);
  if (ax > 88.0) {
    let h = exp(0.5 * ax);
    return (0.5 * h) * h;
  }
  let e = exp(ax);
  return 0.5 * (e + 1.0 / e);
}
fn f_tanh(x: f32) -> f32 {
  let ax = f_abs(x);
  if (f_isnan(x)) { return x; }
  if (ax > 9.5) { return f_copysign(1.0, x); }
  let t = f_expm1(2.0 * ax);
  return f_copysign(t / (t + 2.0), x);
}
fn f_asinh(x: f32) -> f32 {
  let ax = f_abs(x);
  if (f_isnan(x) || f_isinf(x)) { return x; }
  var r: f32;
  if (ax > 4096.0) {
    r = log(ax) + 0.6931471805599453;
  } else {
    r = f_log1p(ax + ax * ax / (1.0 + sqrt(1.0 + ax * ax)));
  }
  return f_copysign(r, x);
}
fn f_acosh(x: f32) -> f32 {
  if (f_isnan(x) || x < 1.0) { return f_nan(); }
  if (f_isinf(x)) { return x; }
  if (x > 4096.0) { return log(x) + 0.6931471805599453; }
  let t = x - 1.0;
  return f_log1p(t + sqrt(2.0 * t + t * t));
}
fn f_atanh(x: f32) -> f32 {
  let ax = f_abs(x);
  if (f_isnan(x) || ax > 1.0) { return f_nan(); }
  if (ax == 1.0) { return f_copysign(f_inf(), x); }
  return f_copysign(0.5 * f_log1p(2.0 * ax / (1.0 - ax)), x);
}
fn f_asin(x: f32) -> f32 {
  if (f_isnan(x) || f_abs(x) > 1.0) { return f_nan(); }
  return asin(x);
}
fn f_acos(x: f32) -> f32 {
  if (f_isnan(x) || f_abs(x) > 1.0) { return f_nan(); }
  return acos(x);
}
fn f_atan(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  if (f_isinf(x)) { return f_copysign(1.5707963267948966, x); }
  return atan(x);
}
fn f_sqrt(x: f32) -> f32 {
  if (f_isnan(x) || x < 0.0) { return f_nan(); }
  if (f_isinf(x) || x == 0.0) { return x; }
  return sqrt(x);
}
fn f_log(x: f32) -> f32 {
  if (f_isnan(x) || x < 0.0) { return f_nan(); }
  if (x == 0.0) { return f_neg(f_inf()); }
  if (f_isinf(x)) { return x; }
  return log(x);
}
fn f_exp(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  if (x > 88.72284) { return f_inf(); }
  if (x < -103.97208) { return 0.0; }
  return exp(x);
}
fn f_trig_ok(x: f32) -> bool { return !f_isnan(x) && !f_isinf(x); }
fn f_sin(x: f32) -> f32 { if (!f_trig_ok(x)) { return f_nan(); } return sin(x); }
fn f_cos(x: f32) -> f32 { if (!f_trig_ok(x)) { return f_nan(); } return cos(x); }
fn f_tan(x: f32) -> f32 { if (!f_trig_ok(x)) { return f_nan(); } return tan(x); }

fn f_atan2(y: f32, x: f32) -> f32 {
  if (f_isnan(x) || f_isnan(y)) { return f_nan(); }
  let pi = 3.141592653589793;
  if (y == 0.0) {
    if (f_signbit(x)) { return f_copysign(pi, y); }
    return y;
  }
  if (x == 0.0) { return f_copysign(0.5 * pi, y); }
  if (f_isinf(x)) {
    if (f_isinf(y)) {
      return f_copysign(select(0.25 * pi, 0.75 * pi, x < 0.0), y);
    }
    return f_copysign(select(0.0, pi, x < 0.0), y);
  }
  if (f_isinf(y)) { return f_copysign(0.5 * pi, y); }
  return atan2(y, x);
}

fn f_hypot(a: f32, b: f32) -> f32 {
  if (f_isinf(a) || f_isinf(b)) { return f_inf(); }
  if (f_isnan(a) || f_isnan(b)) { return f_nan(); }
  let x = f_abs(a);
  let y = f_abs(b);
  let m = max(x, y);
  if (m == 0.0) { return 0.0; }
  let p = x / m;
  let q = y / m;
  return m * sqrt(p * p + q * q);
}

fn f_logaddexp(a: f32, b: f32) -> f32 {
  if (f_isnan(a) || f_isnan(b)) { return f_nan(); }
  if (a == b) { return a + 0.6931471805599453; }
  let t = a - b;
  if (t > 0.0) { return a + f_log1p(f_exp(-t)); }
  return b + f_log1p(f_exp(t));
}

fn f_nextafter(a: f32, b: f32) -> f32 {
  if (f_isnan(a) || f_isnan(b)) { return f_nan(); }
  if (a == b) { return b; }
  let ba = bitcast<u32>(a);
  if ((ba & 0x7fffffffu) == 0u) { return bitcast<f32>((bitcast<u32>(b) & 0x80000000u) | 1u); }
  // Moving away from zero adds one ulp to the magnitude bits, towards zero subtracts one.
  if ((a < b) == (a > 0.0)) { return bitcast<f32>(ba + 1u); }
  return bitcast<f32>(ba - 1u);
}

fn f_is_odd_integer(y: f32) -> bool {
  if (f_abs(y) >= 16777216.0 || trunc(y) != y) { return false; }
  return (i32(y) & 1) == 1;
}

// C99 pow special cases, then exp2(y * log2|x|), or repeated squaring for small integer y.
fn f_pow(x: f32, y: f32) -> f32 {
  if (y == 0.0 || x == 1.0) { return 1.0; }
  if (f_isnan(x) || f_isnan(y)) { return f_nan(); }
  let ax = f_abs(x);
  let yint = trunc(y) == y;
  let yodd = f_is_odd_integer(y);
  if (f_isinf(y)) {
    if (ax == 1.0) { return 1.0; }
    if ((ax > 1.0) == (y > 0.0)) { return f_inf(); }
    return 0.0;
  }
  if (x == 0.0) {
    if (y < 0.0) { return select(f_inf(), f_copysign(f_inf(), x), yodd); }
    return select(0.0, x, yodd);
  }
  if (f_isinf(x)) {
    let mag = select(0.0, f_inf(), y > 0.0);
    if (x < 0.0 && yodd) { return f_neg(mag); }
    return mag;
  }
  if (x < 0.0 && !yint) { return f_nan(); }
  var r: f32;
  if (yint && f_abs(y) <= 64.0) {
    var n = u32(f_abs(y));
    var base = ax;
    r = 1.0;
    loop {
      if ((n & 1u) == 1u) { r = r * base; }
      n = n >> 1u;
      if (n == 0u) { break; }
      base = base * base;
    }
    if (y < 0.0) { r = 1.0 / r; }
  } else {
    r = exp2(y * log2(ax));
  }
  if (x < 0.0 && yodd) { return f_neg(r); }
  return r;
}

// Integer semantics of NumPy (division by zero gives 0, shifts past the width saturate).
fn i_floor_divide(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  var q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) { q = q - 1; }
  return q;
}
fn i_remainder(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  var r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) { r = r + b; }
  return r;
}
fn u_floor_divide(a: u32, b: u32) -> u32 { if (b == 0u) { return 0u; } return a / b; }
fn u_remainder(a: u32, b: u32) -> u32 { if (b == 0u) { return 0u; } return a % b; }
fn i_shl(a: i32, b: i32) -> i32 { if (u32(b) >= 32u) { return 0; } return a << u32(b); }
fn i_shr(a: i32, b: i32) -> i32 { if (u32(b) >= 32u) { return select(0, -1, a < 0); } return a >> u32(b); }
fn u_shl(a: u32, b: u32) -> u32 { if (b >= 32u) { return 0u; } return a << b; }
fn u_shr(a: u32, b: u32) -> u32 { if (b >= 32u) { return 0u; } return a >> b; }
fn i_sign(x: i32) -> i32 { return select(select(0, -1, x < 0), 1, x > 0); }
fn i_pow(a: i32, b: i32) -> i32 {
  if (b < 0) {
    if (a == 1) { return 1; }
    if (a == -1) { return select(-1, 1, (b & 1) == 0); }
    return 0;
  }
  var n = u32(b);
  var base = a;
  var r = 1;
  loop {
    if (n == 0u) { break; }
    if ((n & 1u) == 1u) { r = r * base; }
    n = n >> 1u;
    base = base * base;
  }
  return r;
}
fn u_pow(a: u32, b: u32) -> u32 {
  var n = b;
  var base = a;
  var r = 1u;
  loop {
    if (n == 0u) { break; }
    if ((n & 1u) == 1u) { r = r * base; }
    n = n >> 1u;
    base = base * base;
  }
  return r;
}

// float <-> integer conversions with x86/NumPy results for out-of-range values.
fn f_to_i32(x: f32) -> i32 {
  if (f_isnan(x) || x >= 2147483648.0 || x < -2147483648.0) { return -2147483647 - 1; }
  return i32(x);
}
fn f_to_u32(x: f32) -> u32 {
  if (f_isnan(x) || x >= 4294967296.0 || x < -2147483648.0) { return 0x80000000u; }
  if (x >= 2147483648.0) { return u32(x); }
  return bitcast<u32>(i32(x));
}

// binary16 bits <-> f32, exact, round to nearest even.
fn f16_to_f32(h: u32) -> f32 {
  let sign = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0u) { return bitcast<f32>(sign | bitcast<u32>(f32(m) * 5.9604644775390625e-8)); }
  if (e == 31u) { return bitcast<f32>(sign | 0x7f800000u | (m << 13u)); }
  return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 13u));
}
fn f32_to_f16(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  let sign = (b >> 16u) & 0x8000u;
  let e = i32((b >> 23u) & 0xffu);
  let m = b & 0x7fffffu;
  if (e == 255) { return sign | 0x7c00u | select(0u, 0x200u | (m >> 13u), m != 0u); }
  let he = e - 112;
  if (he >= 31) { return sign | 0x7c00u; }
  if (he <= 0) {
    if (he < -10) { return sign; }
    let full = m | 0x800000u;
    let sh = u32(14 - he);
    let r = full >> sh;
    let rem = full & ((1u << sh) - 1u);
    let half = 1u << (sh - 1u);
    return sign | (r + select(0u, 1u, rem > half || (rem == half && (r & 1u) == 1u)));
  }
  let r = m >> 13u;
  let rem = m & 0x1fffu;
  let h = sign | (u32(he) << 10u) | r;
  return h + select(0u, 1u, rem > 0x1000u || (rem == 0x1000u && (r & 1u) == 1u));
}

// Order-preserving u32 image of a float for sorting: NaN largest, -0.0 == 0.0.
fn f_sortkey(x: f32) -> u32 {
  if (f_isnan(x)) { return 0xffffffffu; }
  var b = bitcast<u32>(x);
  if ((b & 0x7fffffffu) == 0u) { b = 0u; }
  if ((b & 0x80000000u) != 0u) { return ~b; }
  return b | 0x80000000u;
}
