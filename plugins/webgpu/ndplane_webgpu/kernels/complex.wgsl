// complex.wgsl: complex64 helpers, c_* of a vec2<f32> (x: real part, y: imaginary part), pasted
// after common.wgsl into the shaders that call them. Written once: _codegen.complex_lib() makes
// the complex128 twins (z_* of a vec2<f64>) from this text with widen_source() -- f32 becomes
// f64, c_X becomes z_X and f_X the float64 helper widen() names -- and fills the placeholders from
// _codegen.COMPLEX_LIMITS for each type. So only the f_* helpers that have float64 twins appear,
// and no bit patterns (the f_* bit tests stand for them).
//
// The arithmetic is NumPy's (naive multiply, Smith's divide, lexicographic order); the functions
// follow C99 Annex G (NumPy calls the C library's): special values first, then the principal
// branch by formulas that keep the signs of zeros on the cuts. References: FreeBSD msun
// (csqrt, cexp, csinh, ccosh, ctanh, catanh, the large-|z| cases of casinh/cacos), W. Kahan,
// "Branch cuts for complex elementary functions" (1987) for casin/cacos in between.

fn c_nonzero(z: vec2<f32>) -> bool { return f_nonzero(z.x) || f_nonzero(z.y); }
fn c_isnan(z: vec2<f32>) -> bool { return f_isnan(z.x) || f_isnan(z.y); }
fn c_isinf(z: vec2<f32>) -> bool { return f_isinf(z.x) || f_isinf(z.y); }
fn c_isfinite(z: vec2<f32>) -> bool { return f_isfinite(z.x) && f_isfinite(z.y); }
fn c_neg(z: vec2<f32>) -> vec2<f32> { return vec2<f32>(f_neg(z.x), f_neg(z.y)); }
fn c_round(z: vec2<f32>) -> vec2<f32> { return vec2<f32>(f_round(z.x), f_round(z.y)); }
fn c_conj(z: vec2<f32>) -> vec2<f32> { return vec2<f32>(z.x, f_neg(z.y)); }
fn c_abs(z: vec2<f32>) -> f32 { return f_hypot(z.x, z.y); }
// z times i and times -i (exact: swaps and sign flips)
fn c_mul_i(z: vec2<f32>) -> vec2<f32> { return vec2<f32>(f_neg(z.y), z.x); }
fn c_mul_mi(z: vec2<f32>) -> vec2<f32> { return vec2<f32>(z.y, f_neg(z.x)); }

// NumPy's comparisons: equal parts; lexicographic order where a NaN part makes it false.
fn c_eq(a: vec2<f32>, b: vec2<f32>) -> bool { return f_eq(a.x, b.x) && f_eq(a.y, b.y); }
fn c_lt(a: vec2<f32>, b: vec2<f32>) -> bool {
  return (f_lt(a.x, b.x) && !f_isnan(a.y) && !f_isnan(b.y)) || (f_eq(a.x, b.x) && f_lt(a.y, b.y));
}
fn c_le(a: vec2<f32>, b: vec2<f32>) -> bool {
  return (f_lt(a.x, b.x) && !f_isnan(a.y) && !f_isnan(b.y)) || (f_eq(a.x, b.x) && f_le(a.y, b.y));
}
fn c_maximum(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return select(b, a, c_isnan(a) || c_le(b, a)); }
fn c_minimum(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return select(b, a, c_isnan(a) || c_le(a, b)); }

fn c_mul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
// n / +0 as IEEE divides (explicit: a GPU need not keep infinities and NaN in a quotient).
fn c_over_zero(n: f32) -> f32 {
  if (f_isnan(n) || n == 0.0) { return f_nan(); }
  return f_copysign(f_inf(), n);
}
// Smith's algorithm, as NumPy divides.
fn c_div(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let abr = f_abs(b.x);
  let abi = f_abs(b.y);
  if (abr >= abi) {
    if (abr == 0.0 && abi == 0.0) { return vec2<f32>(c_over_zero(a.x), c_over_zero(a.y)); }
    let rat = b.y / b.x;
    let scl = 1.0 / (b.x + b.y * rat);
    return vec2<f32>((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
  }
  if (f_isnan(abr) || f_isnan(abi)) { return vec2<f32>(f_nan(), f_nan()); }
  let rat = b.x / b.y;
  let scl = 1.0 / (b.y + b.x * rat);
  return vec2<f32>((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}
fn c_reciprocal(z: vec2<f32>) -> vec2<f32> { return c_div(vec2<f32>(1.0, 0.0), z); }
fn c_square(z: vec2<f32>) -> vec2<f32> { return c_mul(z, z); }
// z / |z| (0 for 0), divided as the reference backend and cpu do: Smith's divide by |z| + 0i,
// which gives NaN + i NaN for every infinite z (spelled out: see c_over_zero).
fn c_sign(z: vec2<f32>) -> vec2<f32> {
  if (c_isinf(z)) { return vec2<f32>(f_nan(), f_nan()); }
  let m = c_abs(z);
  return c_div(z, vec2<f32>(select(m, 1.0, m == 0.0), 0.0));
}

// exp(x) e (e = cos y or sin y), not overflowing where only exp(x) would.
fn c_exp_times(x: f32, e: f32) -> f32 {
  let ex = f_exp(x);
  if (f_isfinite(ex) || !f_isfinite(x)) { return ex * e; }
  let h = f_exp(0.5 * x);
  return (h * e) * h;
}

fn c_exp(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (y == 0.0) { return vec2<f32>(f_exp(x), y); }
  if (!f_isfinite(y)) {
    if (f_isinf(x) && !f_signbit(x)) { return vec2<f32>(x, f_nan()); }
    if (f_isinf(x)) { return vec2<f32>(0.0, 0.0); }
    return vec2<f32>(f_nan(), f_nan());
  }
  return vec2<f32>(c_exp_times(x, f_cos(y)), c_exp_times(x, f_sin(y)));
}

// exp(z) - 1, as NumPy computes it (and the cpu backend): (expm1(x) cos y - 2 sin^2(y/2),
// exp(x) sin y), exp(x) scaled where only it would overflow, and expm1(x) + i y for a finite
// x and y = 0 (NumPy's exp(x) 0 with an exp(x) that overflows only in float32). NOTE: NumPy's
// NaN at infinite inputs is kept: the core gives the standard's values there (exp(z) - 1).
fn c_expm1(z: vec2<f32>) -> vec2<f32> {
  if (z.y == 0.0 && f_isfinite(z.x)) { return vec2<f32>(f_expm1(z.x), z.y); }
  let a = f_sin(0.5 * z.y);
  var re = f_expm1(z.x) * f_cos(z.y) - 2.0 * a * a;
  if (!f_isfinite(re) && f_isfinite(z.x) && f_isfinite(z.y)) { re = c_exp_times(z.x, f_cos(z.y)); }
  return vec2<f32>(re, c_exp_times(z.x, f_sin(z.y)));
}

// log|z| for finite |z| that the square may overflow or lose to cancellation near 1.
fn c_log_abs(x: f32, y: f32) -> f32 {
  let ax = max(f_abs(x), f_abs(y));
  let ay = min(f_abs(x), f_abs(y));
  if (ax >= 0.5 && ax <= 2.0) { return 0.5 * f_log1p((ax - 1.0) * (ax + 1.0) + ay * ay); }
  let h = f_hypot(x, y);
  if (f_isinf(h) && f_isfinite(ax)) { return f_log(f_hypot(0.5 * x, 0.5 * y)) + 0.6931471805599453; }
  return f_log(h);
}
fn c_log(z: vec2<f32>) -> vec2<f32> {
  if (f_isinf(z.x) || f_isinf(z.y)) { return vec2<f32>(f_inf(), f_atan2(z.y, z.x)); }
  if (f_isnan(z.x) || f_isnan(z.y)) { return vec2<f32>(f_nan(), f_nan()); }
  return vec2<f32>(c_log_abs(z.x, z.y), f_atan2(z.y, z.x));
}
fn c_log2(z: vec2<f32>) -> vec2<f32> { return c_log(z) * 1.4426950408889634; }
fn c_log10(z: vec2<f32>) -> vec2<f32> { return c_log(z) * 0.4342944819032518; }
// log|1 + z| + i arg(1 + z), NumPy's formula, but log|1 + z| = log1p(2x + x^2 + y^2) / 2 for a
// small z, where 1 + x would round away its bits.
fn c_log1p(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (!f_isfinite(x) || !f_isfinite(y)) { return c_log(vec2<f32>(x + 1.0, y)); }
  let im = f_atan2(y, x + 1.0);
  if (max(f_abs(x), f_abs(y)) < 0.5) { return vec2<f32>(0.5 * f_log1p(x * (2.0 + x) + y * y), im); }
  return vec2<f32>(c_log_abs(x + 1.0, y), im);
}

fn c_sqrt(z: vec2<f32>) -> vec2<f32> {
  let a = z.x;
  let b = z.y;
  if (!f_nonzero(a) && !f_nonzero(b)) { return vec2<f32>(0.0, b); }
  if (f_isinf(b)) { return vec2<f32>(f_inf(), b); }
  if (f_isnan(a)) { return vec2<f32>(a, f_nan()); }
  // NOTE: NaN or 0 spelled out, not b - b: a driver may fold x - x to 0 (Vulkan keeps NaN
  // and infinities in arithmetic only under SignedZeroInfNanPreserve, which naga never asks).
  let zero_or_nan = select(0.0, f_nan(), f_isnan(b));
  if (f_isinf(a)) {
    if (f_signbit(a)) { return vec2<f32>(zero_or_nan, f_copysign(f_inf(), b)); }
    return vec2<f32>(a, f_copysign(zero_or_nan, b));
  }
  if (f_isnan(b)) { return vec2<f32>(f_nan(), f_nan()); }
  // scale into a range where a + |z| neither overflows nor loses bits to underflow
  var s: f32 = 1.0;
  var w = z;
  let m = max(f_abs(a), f_abs(b));
  if (m >= $SQRT_BIG) {
    w = z * 0.25;
    s = 2.0;
  } else if (m < $SQRT_SMALL) {
    w = z * $SQRT_UP;
    s = $SQRT_DOWN;
  }
  let h = f_hypot(w.x, w.y);
  if (w.x >= 0.0) {
    let t = f_sqrt(0.5 * (w.x + h));
    return vec2<f32>(t * s, (w.y / (2.0 * t)) * s);
  }
  let t = f_sqrt(0.5 * (h - w.x));
  return vec2<f32>((f_abs(w.y) / (2.0 * t)) * s, f_copysign(t, w.y) * s);
}

// sinh(z) (FreeBSD's csinh); the cosh(x) e and sinh(x) e products are scaled like exp's.
fn c_hyp_times(x: f32, e: f32, cosh: bool) -> f32 {
  let v = select(f_sinh(x), f_cosh(x), cosh);
  if (f_isfinite(v)) { return v * e; }
  let h = f_exp(0.5 * f_abs(x));
  return (select(f_copysign(h, x), h, cosh) * (0.5 * e)) * h;
}
fn c_sinh(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (f_isfinite(x) && f_isfinite(y)) {
    if (y == 0.0) { return vec2<f32>(f_sinh(x), y); }
    return vec2<f32>(c_hyp_times(x, f_cos(y), false), c_hyp_times(x, f_sin(y), true));
  }
  if (x == 0.0) { return vec2<f32>(x, f_nan()); }
  if (y == 0.0) { return vec2<f32>(x, y); }
  if (f_isfinite(x)) { return vec2<f32>(f_nan(), f_nan()); }
  if (f_isinf(x)) {
    if (!f_isfinite(y)) { return vec2<f32>(x, f_nan()); }
    return vec2<f32>(x * f_cos(y), f_inf() * f_sin(y));
  }
  return vec2<f32>(f_nan(), f_nan());
}
fn c_cosh(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (f_isfinite(x) && f_isfinite(y)) {
    if (y == 0.0) { return vec2<f32>(f_cosh(x), f_copysign(0.0, x) * y); }
    return vec2<f32>(c_hyp_times(x, f_cos(y), true), c_hyp_times(x, f_sin(y), false));
  }
  if (x == 0.0) { return vec2<f32>(f_nan(), 0.0); }
  if (y == 0.0) {
    if (f_isnan(x)) { return vec2<f32>(x, 0.0); }
    return vec2<f32>(f_inf(), f_copysign(0.0, x) * y);
  }
  if (f_isfinite(x)) { return vec2<f32>(f_nan(), f_nan()); }
  if (f_isinf(x)) {
    if (!f_isfinite(y)) { return vec2<f32>(f_inf(), f_nan()); }
    return vec2<f32>(f_inf() * f_cos(y), x * f_sin(y));
  }
  return vec2<f32>(f_nan(), f_nan());
}
fn c_tanh(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (!f_isfinite(x)) {
    if (f_isnan(x)) { return vec2<f32>(x, select(f_nan(), y, y == 0.0)); }
    var im = y;
    if (f_isfinite(y)) { im = f_sin(y) * f_cos(y); }
    return vec2<f32>(f_copysign(1.0, x), f_copysign(0.0, im));
  }
  if (!f_isfinite(y)) {
    if (x == 0.0) { return vec2<f32>(x, f_nan()); }
    return vec2<f32>(f_nan(), f_nan());
  }
  if (f_abs(x) >= $TANH_BIG) {
    let e = f_exp(-f_abs(x));
    return vec2<f32>(f_copysign(1.0, x), 4.0 * f_sin(y) * f_cos(y) * e * e);
  }
  let t = f_tan(y);
  let beta = 1.0 + t * t;
  let s = f_sinh(x);
  let rho = f_sqrt(1.0 + s * s);
  let den = 1.0 + beta * s * s;
  return vec2<f32>((beta * rho * s) / den, t / den);
}
// The circular functions through the hyperbolic ones, as C99 defines them:
// sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz).
fn c_sin(z: vec2<f32>) -> vec2<f32> { return c_mul_mi(c_sinh(c_mul_i(z))); }
fn c_cos(z: vec2<f32>) -> vec2<f32> { return c_cosh(c_mul_i(z)); }
fn c_tan(z: vec2<f32>) -> vec2<f32> { return c_mul_mi(c_tanh(c_mul_i(z))); }

// log(z) + log 2 for |z| >= $ASIN_BIG or a non-finite z, the large-|z| asinh/acosh.
fn c_log_2z(x: f32, y: f32) -> vec2<f32> {
  let l = c_log(vec2<f32>(x, y));
  return vec2<f32>(l.x + 0.6931471805599453, l.y);
}
fn c_asin_big(z: vec2<f32>) -> bool { return !(max(f_abs(z.x), f_abs(z.y)) < $ASIN_BIG); }
fn c_asinh(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (f_isnan(x) || f_isnan(y)) {
    if (f_isinf(x)) { return vec2<f32>(x, f_nan()); }
    if (f_isinf(y)) { return vec2<f32>(y, f_nan()); }
    if (y == 0.0) { return vec2<f32>(f_nan(), y); }
    return vec2<f32>(f_nan(), f_nan());
  }
  if (c_asin_big(z)) {
    let w = c_log_2z(f_abs(x), f_abs(y));
    return vec2<f32>(f_copysign(w.x, x), f_copysign(w.y, y));
  }
  if (y == 0.0) { return vec2<f32>(f_asinh(x), y); }
  // Kahan: asinh z = -i asin(iz), asin w = atan(u / Re(s1 s2)) + i asinh(Im(conj(s1) s2)),
  // s1 = sqrt(1 - w), s2 = sqrt(1 + w).
  let w = c_mul_i(z);
  let s1 = c_sqrt(vec2<f32>(1.0 - w.x, f_neg(w.y)));
  let s2 = c_sqrt(vec2<f32>(1.0 + w.x, w.y));
  let re = f_atan2(w.x, s1.x * s2.x - s1.y * s2.y);
  let im = f_asinh(s1.x * s2.y - s1.y * s2.x);
  return c_mul_mi(vec2<f32>(re, im));
}
fn c_asin(z: vec2<f32>) -> vec2<f32> { return c_mul_mi(c_asinh(c_mul_i(z))); }
fn c_acos(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (f_isnan(x) || f_isnan(y)) {
    if (f_isinf(x)) { return vec2<f32>(f_nan(), f_neg(f_inf())); }
    if (f_isinf(y)) { return vec2<f32>(f_nan(), f_neg(y)); }
    if (x == 0.0) { return vec2<f32>(1.5707963267948966, f_nan()); }
    return vec2<f32>(f_nan(), f_nan());
  }
  if (c_asin_big(z)) {
    let w = c_log_2z(x, y);
    return vec2<f32>(f_abs(w.y), select(f_neg(w.x), w.x, f_signbit(y)));
  }
  // Kahan: acos z = 2 atan(Re s1 / Re s2) + i asinh(Im(conj(s2) s1)), s1 = sqrt(1 - z), s2 = sqrt(1 + z).
  let s1 = c_sqrt(vec2<f32>(1.0 - x, f_neg(y)));
  let s2 = c_sqrt(vec2<f32>(1.0 + x, y));
  return vec2<f32>(2.0 * f_atan2(s1.x, s2.x), f_asinh(s2.x * s1.y - s2.y * s1.x));
}
// C99: acosh z = +-i acos z, the sign that makes the real part >= 0 (FreeBSD's cacosh, but
// acosh(+-0 + i NaN) = NaN + i pi/2 as the standard and NumPy have it, from acos's pi/2 + i NaN).
fn c_acosh(z: vec2<f32>) -> vec2<f32> {
  let w = c_acos(z);
  if (f_isnan(w.x) && f_isnan(w.y)) { return w; }
  if (f_isnan(w.x)) { return vec2<f32>(f_abs(w.y), w.x); }
  if (f_isnan(w.y)) { return vec2<f32>(w.y, w.x); }
  return vec2<f32>(f_abs(w.y), f_copysign(w.x, z.y));
}

// FreeBSD's catanh; atan z = -i atanh(iz).
fn c_atanh(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  let ax = f_abs(x);
  let ay = f_abs(y);
  if (y == 0.0 && ax <= 1.0) { return vec2<f32>(f_atanh(x), y); }
  if (x == 0.0 && !f_isnan(y)) { return vec2<f32>(x, f_atan(y)); }
  if (f_isnan(x) || f_isnan(y)) {
    if (f_isinf(x)) { return vec2<f32>(f_copysign(0.0, x), f_nan()); }
    if (f_isinf(y)) { return vec2<f32>(f_copysign(0.0, x), f_copysign(1.5707963267948966, y)); }
    if (x == 0.0) { return vec2<f32>(x, f_nan()); }
    return vec2<f32>(f_nan(), f_nan());
  }
  if (ax >= $ASIN_BIG || ay >= $ASIN_BIG) {
    var rx: f32 = 0.0;
    if (f_isfinite(ax) && f_isfinite(ay)) {
      let m = max(ax, ay);
      let p = ax / m;
      let q = ay / m;
      rx = (p / (p * p + q * q)) / m;
    }
    return vec2<f32>(f_copysign(rx, x), f_copysign(1.5707963267948966, y));
  }
  var rx: f32;
  if (ax == 1.0 && ay < $SQRT_SMALL) {  // log1p(4 / ay^2) / 4, without the square underflowing
    rx = 0.5 * (0.6931471805599453 - f_log(ay));
  } else {
    let d = (ax - 1.0) * (ax - 1.0) + ay * ay;
    rx = 0.25 * f_log1p(4.0 * ax / d);
  }
  var ry: f32;
  if (ax == 1.0) {
    ry = 0.5 * f_atan2(2.0, -ay);
  } else {
    ry = 0.5 * f_atan2(2.0 * ay, (1.0 - ax) * (1.0 + ax) - ay * ay);
  }
  return vec2<f32>(f_copysign(rx, x), f_copysign(ry, y));
}
fn c_atan(z: vec2<f32>) -> vec2<f32> { return c_mul_mi(c_atanh(c_mul_i(z))); }

// C99 Annex G's multiply (__mulsc3): the product, with the infinities a NaN + i NaN result hides
// recovered; NumPy's power multiplies b log a so, through the C library's cpow.
fn c_unit_or_zero(v: f32) -> f32 { return f_copysign(select(f32(0.0), f32(1.0), f_isinf(v)), v); }
fn c_zero_if_nan(v: f32) -> f32 { return select(v, f_copysign(0.0, v), f_isnan(v)); }
fn c_mul_inf(a0: vec2<f32>, b0: vec2<f32>) -> vec2<f32> {
  let r = c_mul(a0, b0);
  if (!f_isnan(r.x) || !f_isnan(r.y)) { return r; }
  var a = a0;
  var b = b0;
  var again = false;
  if (c_isinf(a)) {
    a = vec2<f32>(c_unit_or_zero(a.x), c_unit_or_zero(a.y));
    b = vec2<f32>(c_zero_if_nan(b.x), c_zero_if_nan(b.y));
    again = true;
  }
  if (c_isinf(b)) {
    b = vec2<f32>(c_unit_or_zero(b.x), c_unit_or_zero(b.y));
    a = vec2<f32>(c_zero_if_nan(a.x), c_zero_if_nan(a.y));
    again = true;
  }
  if (!again && (f_isinf(a.x * b.x) || f_isinf(a.y * b.y) || f_isinf(a.x * b.y) || f_isinf(a.y * b.x))) {
    a = vec2<f32>(c_zero_if_nan(a.x), c_zero_if_nan(a.y));
    b = vec2<f32>(c_zero_if_nan(b.x), c_zero_if_nan(b.y));
    again = true;
  }
  if (!again) { return r; }
  return c_mul(a, b) * f_inf();
}

// NumPy's power: 1 for a zero exponent, 0 or NaN for a zero base, repeated multiplication for
// small integer exponents, else exp(b log a).
fn c_pow(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  if (b.x == 0.0 && b.y == 0.0) { return vec2<f32>(1.0, 0.0); }
  if (a.x == 0.0 && a.y == 0.0) {
    if (b.x > 0.0) { return vec2<f32>(0.0, 0.0); }
    return vec2<f32>(f_nan(), f_nan());
  }
  if (b.y == 0.0 && b.x >= -100.0 && b.x <= 100.0 && trunc(b.x) == b.x) {
    let n = i32(b.x);
    if (n == 1) { return a; }
    if (n == 2) { return c_mul(a, a); }
    if (n == 3) { return c_mul(c_mul(a, a), a); }
    var m = abs(n);
    var acc = vec2<f32>(1.0, 0.0);
    var p = a;
    loop {
      if ((m & 1) != 0) { acc = c_mul(acc, p); }
      m = m >> 1u;
      if (m == 0) { break; }
      p = c_mul(p, p);
    }
    if (n < 0) { return c_div(vec2<f32>(1.0, 0.0), acc); }
    return acc;
  }
  return c_exp(c_mul_inf(b, c_log(a)));
}
