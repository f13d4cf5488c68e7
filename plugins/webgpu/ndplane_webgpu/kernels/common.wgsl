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
// trunc and round (half to even, as NumPy) from floor and the sign bit, not WGSL's trunc() and
// round(): lavapipe on a CPU without AVX-512 gave round(27.5) = 27 and trunc(-0.5) = +0 in
// float64 (float32 takes the same road: one definition of each, widened to f64math.wgsl's
// f64_trunc/f64_round).
fn f_trunc(x: f32) -> f32 { return f_copysign(floor(f_abs(x)), x); }
fn f_round(x: f32) -> f32 {
  let a = f_abs(x);
  var r = floor(a);
  let d = a - r;  // exact below 2^24; NaN for an infinite x, which keeps r
  if (d > 0.5 || (d == 0.5 && floor(r * 0.5) * 2.0 != r)) { r = r + 1.0; }
  return f_copysign(r, x);
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

// NOTE: from the bits: Mesa's NIR turned the select chain into its fsign, -0.0 for +0.0.
fn f_sign(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  if (f_isnan(x) || (b & 0x7fffffffu) == 0u) { return select(x, 0.0, b << 1u == 0u); }
  return bitcast<f32>((b & 0x80000000u) | 0x3f800000u);
}

// C fmod (sign of a), exact: integer long division of the significands (musl's fmodf).
fn f_fmod(a: f32, b: f32) -> f32 {
  if (f_isnan(a) || f_isnan(b) || f_isinf(a) || b == 0.0) { return f_nan(); }
  if (f_isinf(b)) { return a; }
  let ux = bitcast<u32>(a);
  let sx = ux & 0x80000000u;
  var mx = ux & 0x7fffffffu;
  var my = bitcast<u32>(b) & 0x7fffffffu;
  if (mx <= my) {
    if (mx == my) { return bitcast<f32>(sx); }
    return a;
  }
  var ex = i32(mx >> 23u);
  var ey = i32(my >> 23u);
  if (ex == 0) {
    var i = mx << 9u;
    loop { if ((i >> 31u) != 0u) { break; } ex = ex - 1; i = i << 1u; }
    mx = mx << u32(1 - ex);
  } else {
    mx = (mx & 0x7fffffu) | 0x800000u;
  }
  if (ey == 0) {
    var i = my << 9u;
    loop { if ((i >> 31u) != 0u) { break; } ey = ey - 1; i = i << 1u; }
    my = my << u32(1 - ey);
  } else {
    my = (my & 0x7fffffu) | 0x800000u;
  }
  loop {
    if (ex <= ey) { break; }
    if (mx >= my) {
      if (mx == my) { return bitcast<f32>(sx); }
      mx = mx - my;
    }
    mx = mx << 1u;
    ex = ex - 1;
  }
  if (mx >= my) {
    if (mx == my) { return bitcast<f32>(sx); }
    mx = mx - my;
  }
  loop { if ((mx >> 23u) != 0u) { break; } mx = mx << 1u; ex = ex - 1; }
  if (ex > 0) {
    mx = (mx - 0x800000u) | (u32(ex) << 23u);
  } else {
    mx = mx >> u32(1 - ex);
  }
  return bitcast<f32>(mx | sx);
}

// NumPy npy_divmod: floor quotient and the remainder with the sign of b (b != 0).
fn f_divmod(a: f32, b: f32) -> vec2<f32> {
  var m = f_fmod(a, b);
  var d = (a - m) / b;
  if (f_isnan(m) || m != 0.0) {
    if ((b < 0.0) != (m < 0.0)) {
      m = m + b;
      d = d - 1.0;
    }
  } else {
    m = f_copysign(0.0, b);
  }
  var fd: f32;
  if (f_isnan(d) || d != 0.0) {
    fd = floor(d);
    if (d - fd > 0.5) { fd = fd + 1.0; }
  } else {
    fd = f_copysign(0.0, a / b);
  }
  return vec2<f32>(fd, m);
}

fn f_remainder(a: f32, b: f32) -> f32 {
  if (b == 0.0) { return f_fmod(a, b); }
  return f_divmod(a, b).y;
}

fn f_floor_divide(a: f32, b: f32) -> f32 {
  if (b == 0.0) { return a / b; }
  return f_divmod(a, b).x;
}

// Transcendentals after Cephes (S. Moshier): only +, -, *, / and bit operations, so the
// accuracy (~1-2 ulp) does not depend on the driver's exp/log/sin approximations
// (Vulkan allows e.g. sin with 2^-11 absolute error).
// y * 2^n for normal y, rounded once. A subnormal result is built from y's bits by an integer
// shift (round to nearest even): WGSL lets a GPU flush f32 subnormals to zero (NVIDIA's Vulkan
// driver does), which lost exp(-87.5) = 9.7e-39 there; integers are never flushed.
fn f_scale(y: f32, n: i32) -> f32 {
  let b = bitcast<u32>(y);
  let en = i32((b >> 23u) & 0xffu) + n;
  if (en >= 1 || (b & 0x7f800000u) == 0u || (b & 0x7f800000u) == 0x7f800000u) {
    let h = n / 2;
    return ldexp(ldexp(y, h), n - h);
  }
  let sh = u32(min(1 - en, 25));
  let m = (b & 0x7fffffu) | 0x800000u;
  let r = m >> sh;
  let rem = m & ((1u << sh) - 1u);
  let half = 1u << (sh - 1u);
  let up = rem > half || (rem == half && (r & 1u) == 1u);
  return bitcast<f32>((b & 0x80000000u) | (r + select(0u, 1u, up)));  // r + 1 may be 2^-126
}

fn f_exp(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  if (x > 88.72283935546875) { return f_inf(); }
  if (x < -103.97208) { return 0.0; }
  return f_exp_scaled(x, 0);
}

// exp(x) * 2^s with one rounding at the end, so no intermediate overflows: for finite
// -104 < x < 89.5 (sinh and cosh take exp(|x|) / 2 this way, finite up to |x| = 89.4159).
fn f_exp_scaled(x: f32, s: i32) -> f32 {
  let z = floor(x * 1.4426950408889634 + 0.5);
  var r = x - z * 0.693359375;
  r = r - z * -2.12194440e-4;
  var p = 1.9875691500e-4;
  p = p * r + 1.3981999507e-3;
  p = p * r + 8.3334519073e-3;
  p = p * r + 4.1665795894e-2;
  p = p * r + 1.6666665459e-1;
  p = p * r + 5.0000001201e-1;
  let y = p * (r * r) + r + 1.0;
  return f_scale(y, i32(z) + s);
}

// ln(x) = m + y + e * ln2 for finite x > 0: (e, m, y), m exact, |y| < m^2 / 2 (f_log_parts:
// (e, m + y)).
fn f_log_parts3(x: f32) -> vec3<f32> {
  // A subnormal x is its integer significand times 2^-149, taken from the bits: frexp gives a
  // wrong exponent for subnormals on lavapipe, and a flushing GPU would lose x * 2^24.
  let b = bitcast<u32>(x);
  let sub = (b & 0x7f800000u) == 0u;
  let fe = frexp(select(x, f32(b & 0x7fffffu), sub));
  var m = fe.fract;
  var e = f32(fe.exp) - select(0.0, 149.0, sub);
  if (m < 0.70710678118654752) {
    e = e - 1.0;
    m = m + m - 1.0;
  } else {
    m = m - 1.0;
  }
  let z = m * m;
  var y = 7.0376836292e-2;
  y = y * m - 1.1514610310e-1;
  y = y * m + 1.1676998740e-1;
  y = y * m - 1.2420140846e-1;
  y = y * m + 1.4249322787e-1;
  y = y * m - 1.6668057665e-1;
  y = y * m + 2.0000714765e-1;
  y = y * m - 2.4999993993e-1;
  y = y * m + 3.3333331174e-1;
  y = y * m * z;
  y = y - 0.5 * z;
  return vec3<f32>(e, m, y);
}
fn f_log_parts(x: f32) -> vec2<f32> {
  let p = f_log_parts3(x);
  return vec2<f32>(p.x, p.y + p.z);
}

// NaN, negative, zero and infinity cases of the logarithms; 1.0 marks "finite positive".
// NOTE: zero and sign from the bits: a GPU that flushes subnormals compares a subnormal equal
// to 0 (log(1e-40) was -inf on NVIDIA); f_log_parts3 reads a subnormal's bits as integers.
fn f_log_special(x: f32) -> vec2<f32> {
  if (f_isnan(x) || (f_signbit(x) && f_nonzero(x))) { return vec2<f32>(0.0, f_nan()); }
  if (!f_nonzero(x)) { return vec2<f32>(0.0, f_neg(f_inf())); }
  if (f_isinf(x)) { return vec2<f32>(0.0, x); }
  return vec2<f32>(1.0, 0.0);
}

fn f_log(x: f32) -> f32 {
  let s = f_log_special(x);
  if (s.x == 0.0) { return s.y; }
  // e * 0.693359375 (9 bits) + m exactly as a two-sum, so that only the last addition rounds
  // at the result's scale (1.48 ulp when m + y and e ln2 were each rounded).
  let p = f_log_parts3(x);
  let h = f_two_sum(p.x * 0.693359375, p.y);
  return h.x + (h.y + (p.z + p.x * -2.12194440e-4));
}

fn f_log2(x: f32) -> f32 {
  let s = f_log_special(x);
  if (s.x == 0.0) { return s.y; }
  let p = f_log_parts3(x);
  let h = f_two_sum(p.x, p.y);  // e + m exactly; then (m + y) log2(e) - m
  return h.x + (h.y + (p.y * 0.44269504088896341 + p.z * 1.4426950408889634));
}

fn f_log10(x: f32) -> f32 {
  let s = f_log_special(x);
  if (s.x == 0.0) { return s.y; }
  // e log10(2) + (m + y) log10(e) with e * 0.30078125 (8 bits) + m log10(e) as an exact
  // two-product and two-sum, so that only the last addition rounds at the result's scale.
  let p = f_log_parts3(x);
  let mh = p.y * 0.4342944920063019;
  let ml = f_mul_err(p.y, 0.4342944920063019, mh);
  let h = f_two_sum(p.x * 0.30078125, mh);
  return h.x + (h.y + (ml + (p.y * -1.0103049952192578e-8 + (p.z * 0.4342944920063019
    + p.x * 2.4874566588550806e-4))));
}

// NOTE: Mesa's NIR reassociates float arithmetic that naga does not mark exact ((1 + x) - 1
// -> x: log1p was 8e6 ulp off for tiny x on lavapipe); a value through f_opaque cannot be
// folded, since the select on a NaN payload that never occurs is not known at compile time.
fn f_opaque(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  return bitcast<f32>(b + select(0u, 1u, b == 0x7fc12345u));
}

fn f_log1p(x: f32) -> f32 {
  if (f_isnan(x) || x < -1.0) { return f_nan(); }
  if (f_isinf(x)) { return x; }
  let u = f_two_sum(1.0, x);  // 1 + x = u.x + u.y exactly
  if (u.x == 1.0) { return x; }
  if (u.x == 0.0) { return f_neg(f_inf()); }
  return f_log(u.x) + u.y / u.x;
}

fn f_expm1(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  if (x > 88.72283935546875) { return f_inf(); }
  let ax = f_abs(x);
  if (ax < 1e-5) { return x * (1.0 + 0.5 * x); }  // keeps the sign of zero
  let u = f_exp(x);
  if (u == 1.0) { return x; }
  let um1 = u - 1.0;
  if (um1 == -1.0) { return -1.0; }
  if (ax > 0.5) { return um1; }
  return um1 * (x / f_log(u));
}

const PIO4: f32 = 0.785398163397448309616;
const PIO2: f32 = 1.57079632679489661923;
const PI: f32 = 3.14159265358979323846;

// 4/pi in binary, 32 bits a word: word 0 holds the weights 2^32 .. 2^1 (zero), word k the
// weights 2^(32 - 32k) .. 2^(1 - 32k); enough for every finite f32 (f_trig_reduce_big).
var<private> F_4_OVER_PI: array<u32, 11> = array<u32, 11>(
  0x00000000u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u,
  0xfe5163abu, 0xdebbc561u, 0xb7246e3au, 0x424dd2e0u);

// Bits [t, t + 32) of F_4_OVER_PI counted from the top (t < 320 - 32).
fn f_4_over_pi_bits(t: u32) -> u32 {
  let k = t >> 5u;
  let sh = t & 31u;
  let joined = (F_4_OVER_PI[k] << sh) | (F_4_OVER_PI[k + 1u] >> ((32u - sh) & 31u));
  return select(joined, F_4_OVER_PI[k], sh == 0u);
}

// a * b for 32-bit a, b: (low word, high word) of the 64-bit product, in 16-bit pieces.
fn f_mul32x32(a: u32, b: u32) -> vec2<u32> {
  let al = a & 0xffffu;
  let ah = a >> 16u;
  let bl = b & 0xffffu;
  let bh = b >> 16u;
  let p0 = al * bl;
  let p1 = al * bh;
  let mid = p1 + ah * bl;
  let cmid = select(0u, 1u, mid < p1);
  let lo = p0 + (mid << 16u);
  let hi = ah * bh + (mid >> 16u) + (cmid << 16u) + select(0u, 1u, lo < p0);
  return vec2<u32>(lo, hi);
}

// Payne-Hanek reduction for |x| > pi/4 (f_trig_reduce's convention): with x = m 2^s,
// x 4/pi mod 8 = (m * W mod 2^128) / 2^125, W the 128 bits of 4/pi whose top bit has weight
// 2^(2 - s); bits above it add multiples of 8. The octant is the top 3 bits, the next 93 the
// fraction f of pi/4 (folded to 1 - f, negated, in odd octants). f is normalized to 64 bits,
// multiplied by pi/4 (64 bits) in integers and split into hi + lo (hi exact, |lo| < ulp(hi)):
// the reduced argument to about 2^-60 relative, where f32(f) * pi/4 was up to 1.7 ulp off.
fn f_trig_reduce_big(ax: f32) -> vec3<f32> {
  let bits = bitcast<u32>(ax);
  let m = (bits & 0x7fffffu) | 0x800000u;
  let t = ((bits >> 23u) & 0xffu) - 120u;  // 30 + s, s = exponent - 150 (>= -24 here)
  let p0 = f_mul32x32(m, f_4_over_pi_bits(t + 96u));
  let p1 = f_mul32x32(m, f_4_over_pi_bits(t + 64u));
  let p2 = f_mul32x32(m, f_4_over_pi_bits(t + 32u));
  let p3 = f_mul32x32(m, f_4_over_pi_bits(t));
  var r1 = p0.y + p1.x;
  var c = select(0u, 1u, r1 < p0.y);
  let s2 = p1.y + p2.x;
  var r2 = s2 + c;
  c = select(0u, 1u, s2 < p1.y) + select(0u, 1u, r2 < s2);
  let r3 = p2.y + p3.x + c;
  var j = r3 >> 29u;
  var a = r3 & 0x1fffffffu;
  var b = r2;
  var d = r1;
  var sign = 1.0;
  if ((j & 1u) == 1u) {  // the next octant, from below: 2^93 - fraction, negated
    j = j + 1u;
    sign = -1.0;
    d = ~d + 1u;
    let cd = select(0u, 1u, r1 == 0u);
    b = ~b + cd;
    a = (~a + select(0u, 1u, cd == 1u && r2 == 0u)) & 0x1fffffffu;
  }
  // The fraction (a, b, d) = f 2^93, shifted left by lz to (n1, n0): f = n 2^(-61 - lz).
  var w0 = a;
  var w1 = b;
  var w2 = d;
  var lz = 0u;
  if (w0 == 0u) { w0 = w1; w1 = w2; w2 = 0u; lz = 32u; }
  if (w0 == 0u) { w0 = w1; w1 = 0u; lz = 64u; }
  if (w0 == 0u) { return vec3<f32>(f32(j & 7u), 0.0, 0.0); }
  let sh = countLeadingZeros(w0);
  lz = lz + sh;
  let rs = (32u - sh) & 31u;
  let n1 = select((w0 << sh) | (w1 >> rs), w0, sh == 0u);
  let n0 = select((w1 << sh) | (w2 >> rs), w1, sh == 0u);
  // (n1 2^32 + n0) (pi/4 2^64) / 2^64 = (h 2^32 + l), to within 2 (n0 * low word dropped).
  let q1 = f_mul32x32(n1, 0x2168c235u);
  let q2 = f_mul32x32(n0, 0xc90fdaa2u);
  let q3 = f_mul32x32(n1, 0xc90fdaa2u);
  let mid = q1.x + q2.x;
  let l1 = q3.x + q1.y;
  let l2 = l1 + q2.y;
  let l = l2 + select(0u, 1u, mid < q1.x);
  let h = q3.y + select(0u, 1u, l1 < q3.x) + select(0u, 1u, l2 < l1) + select(0u, 1u, l < l2);
  let keep = 0xffffff00u >> countLeadingZeros(h);  // the top 24 bits (h >= 2^30)
  let e = -61 - i32(lz);
  let hi = ldexp(f32(h & keep), e + 32);
  let lo = ldexp(f32(h & ~keep) * 4294967296.0 + f32(l), e);
  return vec3<f32>(f32(j & 7u), sign * hi, sign * lo);
}

// Reduction by pi/4: (octant j, z = hi + lo in [-pi/4, pi/4]). NOTE: Payne-Hanek above
// pi/4, not Cody-Waite below some bound: Mesa's NIR reassociates the Cody-Waite steps
// ((x - y C1) - y C2) - y C3 (naga marks no operation exact), which cost up to 16000 ulp in
// cos near its zeros below 8192 pi on lavapipe; integers cannot be reassociated.
fn f_trig_reduce(ax: f32) -> vec3<f32> {
  if (ax <= PIO4) { return vec3<f32>(0.0, ax, 0.0); }
  return f_trig_reduce_big(ax);
}
// sin(hi + lo) and cos(hi + lo) for |hi + lo| <= pi/4, |lo| <= ulp(hi).
fn f_sin_poly(hi: f32, lo: f32) -> f32 {
  let zz = hi * hi;
  let s = ((-1.9515295891e-4 * zz + 8.3321608736e-3) * zz - 1.6666654611e-1) * zz * hi;
  return hi + (s + (lo - 0.5 * zz * lo));
}
fn f_cos_poly(hi: f32, lo: f32) -> f32 {
  let zz = hi * hi;
  let hz = f_opaque(0.5 * zz);
  let w = f_opaque(1.0 - hz);
  let ew = f_opaque(1.0 - w) - hz;  // the rounding error of w, exactly
  let q = ((2.443315711809948e-5 * zz - 1.388731625493765e-3) * zz + 4.166664568298827e-2) * zz * zz;
  return w + ((q + ew) - hi * lo);
}
fn f_sin(x: f32) -> f32 {
  if (!f_isfinite(x)) { return f_nan(); }
  let r = f_trig_reduce(f_abs(x));
  var j = u32(r.x);
  var neg = f_signbit(x);  // sin(-0) = -0
  if (j > 3u) { neg = !neg; j = j - 4u; }
  var y = select(f_sin_poly(r.y, r.z), f_cos_poly(r.y, r.z), j == 1u || j == 2u);
  if (neg) { y = -y; }
  return y;
}
fn f_cos(x: f32) -> f32 {
  if (!f_isfinite(x)) { return f_nan(); }
  let r = f_trig_reduce(f_abs(x));
  var j = u32(r.x);
  var neg = false;
  if (j > 3u) { neg = !neg; j = j - 4u; }
  if (j > 1u) { neg = !neg; }
  var y = select(f_cos_poly(r.y, r.z), f_sin_poly(r.y, r.z), j == 1u || j == 2u);
  if (neg) { y = -y; }
  return y;
}
// Dekker's split of a (|a| < 2^115) into 12-bit halves, and the rounding error a * b - p of
// p = a * b exactly (barring underflow); f_opaque keeps c - (c - a) from folding to a, p from
// being contracted back into the product it rounds, and the sum from being reordered (the
// partial products are exact, so a contracted one rounds the same).
fn f_split(a0: f32) -> vec2<f32> {
  let a = f_opaque(a0);
  let c = f_opaque(4097.0 * a);
  let h = f_opaque(c - f_opaque(c - a));
  return vec2<f32>(h, f_opaque(a - h));
}
fn f_mul_err(a: f32, b: f32, p: f32) -> f32 {
  let sa = f_split(a);
  let sb = f_split(b);
  let e = f_opaque(f_opaque(f_opaque(sa.x * sb.x - f_opaque(p)) + sa.x * sb.y) + sa.y * sb.x);
  return e + sa.y * sb.y;
}
fn f_tan(x: f32) -> f32 {
  if (!f_isfinite(x)) { return f_nan(); }
  let ax = f_abs(x);
  let r = f_trig_reduce(ax);
  let z = r.y;
  if (ax <= 1e-4) { return x; }  // tan(-0) = -0
  // tan(z + lo) = t + tl; in odd quadrants -1 / (t + tl) = q (1 + e) + tl q^2, e = 1 + q t.
  let zz = z * z;
  let rest = f_opaque((((((9.38540185543e-3 * zz + 3.11992232697e-3) * zz + 2.44301354525e-2) * zz
    + 5.34112807005e-2) * zz + 1.33387994085e-1) * zz + 3.33331568548e-1) * zz * z + (r.z + zz * r.z));
  let t = f_opaque(z + rest);
  var y = t;
  if ((u32(r.x) & 2u) == 2u) {
    let tl = rest - f_opaque(t - z);
    let q = -1.0 / t;
    let e = -f_mul_err(q, t, -1.0);  // 1 + q t = -(q t - (-1)); q t rounds to -1
    y = q + (q * e + tl * q * q);
  }
  return select(y, -y, f_signbit(x));
}

// atan after fdlibm: atan(c) + atan((|x| - c) / (1 + c |x|)) for c = 0.5, 1, 1.5, inf, with
// atan(c) as hi + lo (a rounded pi/4 alone cost 0.7 ulp where the sum cancels), and a
// polynomial fitted to relative error 0.02 ulp on [0, 7/16].
fn f_atan(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  let a = f_abs(x);
  var t = a;
  var hi = 0.0;
  var lo = 0.0;
  if (a >= 2.4375) {
    t = -1.0 / a;
    hi = 1.5707963705062866;
    lo = -4.371138828673793e-8;
  } else if (a >= 1.1875) {
    t = (a - 1.5) / (1.5 * a + 1.0);
    hi = 0.9827937483787537;
    lo = -2.5131424052915463e-8;
  } else if (a >= 0.6875) {
    t = (a - 1.0) / (a + 1.0);
    hi = 0.7853981852531433;
    lo = -2.1855694143368964e-8;
  } else if (a >= 0.4375) {
    t = (2.0 * a - 1.0) / (a + 2.0);
    hi = 0.46364760398864746;
    lo = 5.01215868808913e-9;
  }
  let z = t * t;
  let p = ((((-5.8190949e-2 * z + 1.0490805e-1) * z - 1.4229581e-1) * z + 1.9997738e-1) * z
    - 3.3333305e-1) * z * t;
  return f_copysign(hi + (t + (lo + p)), x);
}

fn f_asin(x: f32) -> f32 {
  let a = f_abs(x);
  if (f_isnan(x) || a > 1.0) { return f_nan(); }
  if (a < 1e-4) { return x; }
  var z: f32;
  var t: f32;
  let big = a > 0.5;
  if (big) {
    z = 0.5 * (1.0 - a);
    t = sqrt(z);
  } else {
    t = a;
    z = a * a;
  }
  var r = ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z + 7.4953002686e-2) * z
    + 1.6666752422e-1) * z * t + t;
  if (big) { r = PIO2 - (r + r); }
  return f_copysign(r, x);
}

fn f_acos(x: f32) -> f32 {
  if (f_isnan(x) || f_abs(x) > 1.0) { return f_nan(); }
  if (x < -0.5) { return PI - 2.0 * f_asin(sqrt(0.5 * (1.0 + x))); }
  if (x > 0.5) { return 2.0 * f_asin(sqrt(0.5 * (1.0 - x))); }
  return PIO2 - f_asin(x);
}

// exp(|x|) / 2 for |x| > 88, where exp(-|x|) no longer counts; computed as one scaled exp:
// a product such as (h / 2) * h of h = exp(|x| / 2) overflows if a driver reassociates it.
fn f_exp_half_big(ax: f32) -> f32 {
  if (ax > 89.41598629223294) { return f_inf(); }
  return f_exp_scaled(ax, -1);
}
// sinh: an odd polynomial (fitted to relative error 0.001 ulp) below 1, where
// (t + t / (t + 1)) / 2 of t = expm1(|x|) passed expm1's 2.4 ulp on; above, h - 1 / (4 h) of
// h = exp(|x|) / 2 rounded once.
fn f_sinh(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  let ax = f_abs(x);
  var r: f32;
  if (ax > 88.0) {
    r = f_exp_half_big(ax);
  } else if (ax < 1.0) {
    let zz = ax * ax;
    let p = ((2.8169513e-6 * zz + 1.9836159e-4) * zz + 8.3333496e-3) * zz + 1.6666667e-1;
    r = ax + p * zz * ax;  // keeps sinh(-0) = -0 through the copysign
  } else {
    let h = f_exp_scaled(ax, -1);
    r = h - 0.25 / h;
  }
  return f_copysign(r, x);
}
fn f_cosh(x: f32) -> f32 {
  let ax = f_abs(x);
  if (ax > 88.0) { return f_exp_half_big(ax); }
  let e = f_exp(ax);
  return 0.5 * (e + 1.0 / e);
}
// tanh: an odd polynomial (fitted to relative error 0.02 ulp) below 0.9, where t / (t + 2) of
// t = expm1(2 |x|) passed expm1's 2.4 ulp on; above, 1 - 2 / (exp(2 |x|) + 1) damps exp's error.
fn f_tanh(x: f32) -> f32 {
  let ax = f_abs(x);
  if (f_isnan(x)) { return x; }
  if (ax > 9.5) { return f_copysign(1.0, x); }
  var r: f32;
  if (ax < 0.9) {
    let zz = ax * ax;
    let p = (((((-4.5545897e-4 * zz + 2.5826655e-3) * zz - 8.2645416e-3) * zz + 2.1663541e-2) * zz
      - 5.3929303e-2) * zz + 1.3332978e-1) * zz - 3.3333322e-1;
    r = ax + p * zz * ax;  // keeps tanh(-0) = -0 through the copysign
  } else {
    r = 1.0 - 2.0 / (f_exp(2.0 * ax) + 1.0);
  }
  return f_copysign(r, x);
}
// sigmoid: 1 / (1 + e) for x >= 0, e / (1 + e) below, of e = exp(-|x|) (never overflows).
fn f_sigmoid(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  let e = f_exp(-f_abs(x));
  return select(e, 1.0, x >= 0.0) / (1.0 + e);
}
// silu: x * sigmoid(x) as x / (1 + exp(-x)); below -30.5, where exp(-x) nears overflow further
// left, x * exp(x + 61) * e^-61 (the cpu backend's ops.h). x = -inf: NaN, as x * sigmoid(x).
fn f_silu(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  if (x < -30.5) { return x * f_exp(x + 61.0) * 3.2213402859925161e-27; }
  return x / (1.0 + f_exp(-x));
}
// erfc(a) for a >= 0 (not NaN): exp(-a^2) t S(u), t = 1 / (1 + a), u = 2.1980198 t - 1.1980198,
// S the cpu backend's degree-12 polynomial (tools/fit_erfc.py; ops.h erfc_f32); a^2's rounding
// error (f_mul_err) scales exp(-a^2). Past 10.5 erfc is below f32's subnormals.
fn f_erfc_nonneg(a: f32) -> f32 {
  let ac = min(a, 10.5);
  let p = ac * ac;
  let e = f_exp(-p) * (1.0 - f_mul_err(ac, ac, p));
  let t = 1.0 / (1.0 + ac);
  let u = fma(t, 2.1980198, -1.1980198);
  var s = fma(fma(fma(fma(3.23332261e-05, u, -0.000114602594), u, 7.10374182e-05), u, 0.000300147654), u, -0.000879359926);
  s = fma(fma(fma(fma(s, u, 0.00114284078), u, 0.000356562232), u, -0.00603960489), u, 0.0144121069);
  s = fma(fma(fma(fma(s, u, -0.00417445751), u, -0.0812612069), u, 0.200358471), u, 0.875795732);
  return e * (t * s);
}
// erf: 2 / sqrt(pi) (x - x^3 / 3 + ...) by Taylor's seven terms below |x| = 0.5 (relative
// accuracy near 0), 1 - erfc(|x|) with x's sign above.
fn f_erf(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  let a = f_abs(x);
  if (a < 0.5) {
    let z = x * x;
    let q = fma(fma(fma(fma(fma(fma(-1.0 / 9360.0, z, 1.0 / 1320.0), z, -1.0 / 216.0), z, 1.0 / 42.0), z, -0.1), z, 1.0 / 3.0), z, -1.0);
    return x * -(1.1283791670955126 * q);  // -q = 1 - z / 3 + ...
  }
  return f_copysign(1.0 - f_erfc_nonneg(a), x);
}
// gelu: x / 2 * erfc(z), z = -x / sqrt 2, with erfc(z + zl) = erfc(z) (1 - D zl) for z's
// rounding zl (the product's, f_mul_err, and the constant's) and D ~ 2z + t (1 + 0.128 t) on
// the right (ops.h says why).
fn f_gelu(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  let z = x * -0.70710677;
  let a = f_abs(z);
  let c = f_erfc_nonneg(a);
  var erfc = c;
  if (z < 0.0) { erfc = 2.0 - c; }
  var fix = 1.0;
  if (z > 0.0 && z < 16.0) {
    let zl = f_mul_err(x, -0.70710677, z) + x * -1.21016171e-08;
    let t = 1.0 / (1.0 + a);
    fix = 1.0 - fma(t, fma(0.128379167, t, 1.0), 2.0 * a) * zl;
  }
  return x * 0.5 * erfc * fix;
}
fn f_asinh(x: f32) -> f32 {
  let ax = f_abs(x);
  if (f_isnan(x) || f_isinf(x)) { return x; }
  var r: f32;
  if (ax > 4096.0) {
    r = f_log(ax) + 0.6931471805599453;
  } else {
    r = f_log1p(ax + ax * ax / (1.0 + sqrt(1.0 + ax * ax)));
  }
  if (ax < 0.5) {  // an odd polynomial fitted to relative error 0.001 ulp (keeps asinh(-0) = -0)
    let zz = ax * ax;
    let p = ((((9.1676982e-3 * zz - 1.9979974e-2) * zz + 3.0012950e-2) * zz - 4.4613250e-2) * zz
      + 7.4998893e-2) * zz - 1.6666666e-1;
    r = ax + p * zz * ax;
  }
  return f_copysign(r, x);
}
fn f_acosh(x: f32) -> f32 {
  if (f_isnan(x) || x < 1.0) { return f_nan(); }
  if (f_isinf(x)) { return x; }
  if (x > 4096.0) { return f_log(x) + 0.6931471805599453; }
  let t = x - 1.0;
  return f_log1p(t + sqrt(2.0 * t + t * t));
}
fn f_atanh(x: f32) -> f32 {
  let ax = f_abs(x);
  if (f_isnan(x) || ax > 1.0) { return f_nan(); }
  if (ax == 1.0) { return f_copysign(f_inf(), x); }
  if (ax < 0.5) {  // an odd polynomial fitted to relative error 0.002 ulp (keeps atanh(-0) = -0)
    let zz = ax * ax;
    let p = (((((1.7594236e-1 * zz + 2.4522126e-2) * zz + 1.0282680e-1) * zz + 1.0967184e-1) * zz
      + 1.4294852e-1) * zz + 1.9999728e-1) * zz + 3.3333337e-1;
    return f_copysign(ax + p * zz * ax, x);
  }
  return f_copysign(0.5 * f_log1p(2.0 * ax / (1.0 - ax)), x);
}
// A subnormal x = M 2^-149 (M its integer significand) from the bits: sqrt(x) = sqrt(2M) 2^-75,
// 2M exact in f32 and the result normal, so a GPU that flushes subnormals (where sqrt(1.2e-38)
// returned x itself, equal to 0 there) computes it as one that does not.
fn f_sqrt(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  if (f_isnan(x) || (f_signbit(x) && f_nonzero(x))) { return f_nan(); }
  if (f_isinf(x) || !f_nonzero(x)) { return x; }
  if ((b & 0x7f800000u) == 0u) { return sqrt(f32((b & 0x7fffffu) << 1u)) * 2.6469779601696886e-23; }
  return sqrt(x);
}

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
  let z = f_atan(y / x);
  if (x < 0.0) { return select(z + pi, z - pi, y < 0.0); }
  return z;
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

// bce_with_logits (the cpu backend's ops.h): (1 - t) x + log1p(exp(-x)) for x >= 0, -t x +
// log1p(exp(x)) below, so no two terms cancel for t in [0, 1]; 0 * inf gives NaN, as the formula.
fn f_bce_with_logits(x: f32, t: f32) -> f32 {
  if (f_isnan(x) || f_isnan(t)) { return f_nan(); }
  let c = select(-t, 1.0 - t, x >= 0.0);
  return c * x + f_log1p(f_exp(-f_abs(x)));
}

fn f_logaddexp(a: f32, b: f32) -> f32 {
  if (f_isnan(a) || f_isnan(b)) { return f_nan(); }
  if (a == b) { return a + 0.6931471805599453; }
  let t = a - b;
  if (t > 0.0) { return a + f_log1p(f_exp(-t)); }
  return b + f_log1p(f_exp(t));
}

fn f_logaddexp2(a: f32, b: f32) -> f32 {
  if (f_isnan(a) || f_isnan(b)) { return f_nan(); }
  if (a == b) { return a + 1.0; }
  let t = a - b;
  if (t > 0.0) { return a + f_log1p(exp2(-t)) * 1.4426950408889634; }
  return b + f_log1p(exp2(t)) * 1.4426950408889634;
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
  if (f_abs(y) >= 16777216.0 || !f_is_integer(y)) { return false; }
  return (i32(y) & 1) == 1;
}
// From the bits: a flushing GPU takes trunc(y) == y for a subnormal y.
fn f_is_integer(y: f32) -> bool {
  let b = bitcast<u32>(y) & 0x7fffffffu;
  let e = b >> 23u;
  if (e >= 150u) { return true; }
  if (e < 127u) { return b == 0u; }
  return (b << (e - 118u)) == 0u;  // the fraction bits below the binary point
}

// C99 pow special cases, then exp(y * log|x|), or repeated squaring for small integer y.
// pow's logarithm: x = 2^k m, m in [1, 2) with 24-bit significand M; c = F_POW_IC[i] / 256
// (i the top 6 fraction bits) is near 1 / m, so r = m c - 1 = (M F_POW_IC[i] - 2^31) 2^-31 is
// exact in integers (|r| < 1/64) and ln x = k ln 2 + ln(256 / F_POW_IC[i]) + ln(1 + r), the
// middle term as F_POW_TH[i] + F_POW_TL[i]. The ends take c = 1 and c = 1/2 (the latter with
// k + 1), so near x = 1 the logarithm is r + O(r^2) with no cancellation.
var<private> F_POW_IC: array<u32, 64> = array<u32, 64>(
  256u, 250u, 246u, 243u, 239u, 236u, 232u, 229u, 226u, 223u, 220u, 217u, 214u, 211u, 209u, 206u,
  204u, 201u, 199u, 196u, 194u, 192u, 189u, 187u, 185u, 183u, 181u, 179u, 177u, 175u, 173u, 172u,
  170u, 168u, 166u, 165u, 163u, 161u, 160u, 158u, 157u, 155u, 154u, 152u, 151u, 150u, 148u, 147u,
  146u, 144u, 143u, 142u, 141u, 139u, 138u, 137u, 136u, 135u, 134u, 133u, 132u, 131u, 130u, 128u,
);
var<private> F_POW_TH: array<f32, 64> = array<f32, 64>(
  0.0, 0.023716526105999947, 0.03984590992331505, 0.05211600288748741, 0.06871389597654343,
  0.08134564012289047, 0.09844007343053818, 0.11145544052124023, 0.12464244663715363, 0.13800567388534546,
  0.15154990553855896, 0.16528008878231049, 0.1792014241218567, 0.19331930577754974, 0.20284318923950195,
  0.21730127930641174, 0.22705745697021484, 0.24187253415584564, 0.25187262892723083, 0.267062783241272,
  0.2773192822933197, 0.28768208622932434, 0.303430438041687, 0.31406882405281067, 0.3248216211795807,
  0.33569130301475525, 0.3466804027557373, 0.35779163241386414, 0.369027704000473, 0.3803914785385132,
  0.3918858468532562, 0.39768296480178833, 0.4093790054321289, 0.4212134778499603, 0.43318966031074524,
  0.4392319619655609, 0.45142725110054016, 0.46377307176589966, 0.4700036346912384, 0.4825824201107025,
  0.4889316260814667, 0.5017523169517517, 0.5082248449325562, 0.5212969183921814, 0.5278975963592529,
  0.5345421433448792, 0.5479651689529419, 0.5547448396682739, 0.5615708231925964, 0.5753641724586487,
  0.5823327898979187, 0.5893504023551941, 0.5964175462722778, 0.6107035279273987, 0.6179237365722656,
  0.6251965165138245, 0.6325225830078125, 0.639902651309967, 0.6473376154899597, 0.6548283100128174,
  0.6623755097389221, 0.6699801087379456, 0.6776430010795593, 0.0,
);
var<private> F_POW_TL: array<f32, 64> = array<f32, 64>(
  0.0, 5.113161005709799e-10, -1.376115332796246e-09, -1.7484733660921847e-09, -3.428491712753612e-09,
  -6.689380716018434e-10, -6.17285667026124e-10, 4.0408260071345126e-10, -1.4298769945852996e-09, -8.659017391998702e-10,
  -7.411358193820661e-09, 2.1567925223564544e-09, 5.335854424970421e-09, 5.225946342335419e-09, 3.275249627066046e-09,
  -3.6164302663621584e-09, -6.334868629664925e-09, 2.2646411412807765e-09, -9.172160808645913e-09, 2.0077732809653526e-09,
  3.1229145935895986e-09, -1.3777543550475002e-08, -8.621767300098782e-09, 3.5721652302811435e-09, -1.7783430283913049e-09,
  -1.1376613429092686e-08, 1.0457999799484696e-08, 6.224943227550739e-09, 7.905260446250395e-09, -7.982464467204409e-09,
  3.1285272150682886e-09, 2.8643210026046972e-09, 1.997171761303207e-09, -1.2773656798970023e-08, -4.187726165838512e-09,
  8.61342108748886e-09, -7.42774020068282e-09, 7.729199502648498e-09, -5.4455027154176605e-09, -8.658107120140812e-09,
  1.3049787916941114e-08, 1.0608563805192261e-08, -2.866622939023955e-09, 5.241104883424441e-09, 1.1305385072546414e-08,
  7.038427618510923e-09, 1.762505474900422e-09, 1.8032551452051848e-08, -4.2137041078582627e-10, -2.7555087100950004e-08,
  2.4321735736521077e-08, -1.5476892656351993e-08, 7.829116022151084e-09, -1.657852877201549e-08, 2.275009158836383e-08,
  2.13761319756145e-09, -2.426430256718959e-08, 1.4731165620673892e-08, 2.9038691451432896e-08, 6.24499119084021e-09,
  1.2154269590780586e-08, 1.2540465554877755e-08, -7.055579231973752e-09, 0.0,
);

// a + b = s + e exactly (Knuth), through f_opaque so no compiler folds e to 0.
// NOTE: operands and every rounded intermediate through f_opaque: SPIR-V lets a driver
// contract a * b + c into an fma (NVIDIA's does), which would add a product passed in here
// unrounded in one place and rounded in another. (fma itself is no way out: lavapipe's is
// not fused.)
fn f_two_sum(a0: f32, b0: f32) -> vec2<f32> {
  let a = f_opaque(a0);
  let b = f_opaque(b0);
  let s = f_opaque(a + b);
  let bb = f_opaque(s - a);
  return vec2<f32>(s, f_opaque(a - f_opaque(s - bb)) + f_opaque(b - bb));
}

// ln(ax) as hi + lo, to about 2^-40 relative, for finite ax > 0.
fn f_pow_log(ax: f32) -> vec2<f32> {
  var b = bitcast<u32>(ax);
  var k = i32(b >> 23u) - 127;
  if ((b >> 23u) == 0u) {  // subnormal: its integer significand (exact), 2^-149 apart
    b = bitcast<u32>(f32(b));
    k = i32(b >> 23u) - 127 - 149;
  }
  let i = (b >> 17u) & 63u;
  let big_r = bitcast<i32>(((b & 0x7fffffu) | 0x800000u) * F_POW_IC[i] - 0x80000000u);
  let r_hi = f32(big_r & -4096) * 4.656612873077393e-10;  // 2^-31; 19 bits: exact
  let r_lo = f32(big_r & 4095) * 4.656612873077393e-10;
  let r = r_hi + r_lo;
  let q = r * r * (-0.5 + r * (0.3333333333333333 + r * (-0.25 + r * (0.2 - r * 0.16666666666666666))));
  let kf = f32(k + select(0, 1, i == 63u));  // ln(1 + r) - r above; c = 1/2 at the top
  let s = f_two_sum(kf * 0.693145751953125, F_POW_TH[i]);  // ln2 to 15 bits: k ln2 exact
  let t = f_two_sum(s.x, r_hi);
  let u = f_two_sum(t.x, r_lo);  // near x = 1, r is all of ln x: no part of it in lo
  let lo = f_opaque(f_opaque(f_opaque(s.y + t.y) + u.y) + (q + (F_POW_TL[i] + kf * 1.4286068203094173e-6)));
  let h = f_opaque(u.x + lo);
  return vec2<f32>(h, lo - f_opaque(h - u.x));
}

// |x|^y for finite x != 0, |y| < inf: exp(y ln|x|) with y ln|x| as hi + lo (y and the high
// part cut into 12-bit halves, so each partial product is exact), within about 1.5 ulp.
fn f_pow_core(ax: f32, y: f32) -> f32 {
  let l = f_pow_log(ax);
  let y1 = bitcast<f32>(bitcast<u32>(y) & 0xfffff000u);
  let y2 = y - y1;
  let l1 = bitcast<f32>(bitcast<u32>(l.x) & 0xfffff000u);
  let l2 = l.x - l1;
  let p = f_two_sum(y1 * l1, y1 * l2 + y2 * l1);  // exact products
  let plo = f_opaque(p.y + (y2 * l2 + y * l.y));
  let h = f_opaque(p.x + plo);
  let hl = plo - f_opaque(h - p.x);
  if (h > 89.0) { return f_inf(); }
  if (h < -104.0) { return 0.0; }
  let n = round(h * 1.4426950408889634);
  return f_exp_scaled(((h - n * 0.693359375) - n * -2.12194440e-4) + hl, i32(n));
}

// Zeros, signs and integers from the bits (f_is_integer): a GPU that flushes subnormals takes a
// subnormal x for 0 in comparisons (pow(1e-40, -0.5) was inf on NVIDIA); f_pow_log reads its bits.
fn f_pow(x: f32, y: f32) -> f32 {
  if (!f_nonzero(y) || x == 1.0) { return 1.0; }
  if (f_isnan(x) || f_isnan(y)) { return f_nan(); }
  let ax = f_abs(x);
  let xneg = f_signbit(x);
  let yint = f_is_integer(y);
  let yodd = f_is_odd_integer(y);
  if (f_isinf(y)) {
    if (ax == 1.0) { return 1.0; }
    if ((ax > 1.0) == (y > 0.0)) { return f_inf(); }
    return 0.0;
  }
  if (!f_nonzero(x)) {
    if (f_signbit(y)) { return select(f_inf(), f_copysign(f_inf(), x), yodd); }
    return select(0.0, x, yodd);
  }
  if (f_isinf(x)) {
    let mag = select(0.0, f_inf(), !f_signbit(y));
    if (xneg && yodd) { return f_neg(mag); }
    return mag;
  }
  if (xneg && !yint) { return f_nan(); }
  var r: f32;
  if (y == 1.0 || y == 2.0) {  // one rounding, as NumPy's square
    r = select(ax, ax * ax, y == 2.0);
  } else {
    r = f_pow_core(ax, y);
  }
  if (xneg && yodd) { return f_neg(r); }
  return r;
}

// Integer semantics of NumPy (division by zero gives 0, shifts past the width saturate).
// NOTE: WGSL `%` on signed integers lowers to SPIR-V OpSRem, undefined for negative operands
// under Vulkan unless VK_KHR_maintenance8 is on, and NVIDIA's driver uses that freedom. So
// every remainder in generated WGSL is u_mod, whose u32 signature the WGSL compiler enforces
// (tests/test_codegen.py checks that no other `%` exists); signed ones go through division.
fn u_mod(a: u32, b: u32) -> u32 { return a % b; }
fn i_floor_divide(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  let q = a / b;  // WGSL: INT_MIN / -1 is INT_MIN, as NumPy's floor_divide gives
  if ((a - q * b != 0) && ((a < 0) != (b < 0))) { return q - 1; }
  return q;
}
fn i_remainder(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  var r = a - (a / b) * b;  // wrapping: INT_MIN rem -1 is 0
  if (r != 0 && ((r < 0) != (b < 0))) { r = r + b; }
  return r;
}
fn u_floor_divide(a: u32, b: u32) -> u32 { if (b == 0u) { return 0u; } return a / b; }
fn u_remainder(a: u32, b: u32) -> u32 { if (b == 0u) { return 0u; } return u_mod(a, b); }
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
