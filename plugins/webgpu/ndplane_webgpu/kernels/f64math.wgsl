// f64math.wgsl: float64 transcendental functions for the webgpu backend (issue 23).
//
// Every function is built from +, -, *, /, sqrt, floor, trunc, abs and 64-bit integer bit
// operations only, and conversions between u64 and f64 (in f64_fmod). No `%` at all (the
// backend keeps it to its u_mod / u64_mod helpers; NVIDIA's driver miscomputes OpSRem): WGSL's
// exp, log, sin, pow, ... on f64 become GLSL.std.450 instructions on doubles, which SPIR-V
// does not define (drivers may compute them in float32), so they are NEVER called here.
// Nor is fma: Vulkan does not require it to be fused on doubles (lavapipe's is not), so exact
// products use a 21+32-bit split of the bit pattern instead.
//
// Needs the features `shader-f64` and `shader-int64`: exponents are read through
// bitcast<u64>(x). (naga's frexp on f64 returns an i64 exponent, so it needs shader-int64
// too, and lavapipe's frexp gets subnormals wrong; bitcast<vec2<u32>>(f64) does not parse.)
// Scaling by 2^k multiplies by powers of two built from bits, rounding once.
// Literals: an abstract-float literal becomes f64 only where the context demands it
// (`let c: f64 = 0.5;`, `x * 0.5`); `select(0.0, 1.0, c)` alone is f32.
//
// Exported (NumPy argument order; NumPy's special values: signed zeros, inf, NaN, C99 pow
// and atan2 special cases, overflow to inf and gradual underflow). Max error in ulp against
// NumPy float64 on lavapipe, measured by plugins/webgpu/tests/test_f64math.py (see the
// "webgpu float64" table in docs/api.md, which also gives the error against the exact
// result: NumPy's own is up to 0.8 ulp); the algorithm is given in brackets.
//   f64_exp        1.00 ulp  [x = k ln2 + r, Taylor expm1(r) to r^15, 1 + r + r^2/2 + ... summed
//                             as a double-double and rounded once: 0.51 ulp of the exact result]
//   f64_exp2       1.00 ulp  [exp of x*ln2 taken as a double-double: 0.51 ulp of exact]
//   f64_expm1      1.00 ulp  [same reduction, (2^k - 1) + 2^k expm1(r) in double-double]
//   f64_log        1.00 ulp  [double-double log: 49-entry table of 1/c, log1p series]
//   f64_log2       1.00 ulp  [double-double log times 1/ln2 as a double-double]
//   f64_log10      1.00 ulp  [double-double log times 1/ln10 as a double-double]
//   f64_log1p      1.00 ulp  [log of 1 + x plus the rounding error of 1 + x]
//   f64_sin        1.00 ulp  [|x| < 2^20: Cody-Waite, 3-part pi/2 (33+33+53 bits); beyond, to
//                             the largest double: Payne-Hanek, 192 bits of 2/pi from a 1216-bit
//                             table times the 53-bit significand in 32-bit integer pieces; the
//                             reduced argument a double-double either way, Taylor kernels.
//                             Against the exact result for |x| >= 1.6e6, measured on random
//                             x and the doubles nearest to multiples of pi/2: 1.40 ulp (cos
//                             1.37, tan 0.90); NumPy 2.4's own sin and cos are up to 1.4e5
//                             ulp off on the latter]
//   f64_cos        1.00 ulp  [as sin]
//   f64_tan        1.00 ulp  [sin and cos kernels as double-doubles, divided in double-double]
//   f64_asin       1.00 ulp  [Taylor to |x| = 1/2; beyond, pi/2 - 2 asin(sqrt((1-|x|)/2))]
//   f64_acos       1.00 ulp  [as asin]
//   f64_atan       1.00 ulp  [atan(k/16) table as double-doubles + Taylor; 1/x above 1]
//   f64_atan2      1.00 ulp  [atan of min/max of |y|, |x|, quadrants in double-double]
//   f64_sinh       1.00 ulp  [(u + u/(u+1))/2, u = expm1 as a double-double; exp / 2 above 22]
//   f64_cosh       1.00 ulp  [exp, expm1 near 0]
//   f64_tanh       1.00 ulp  [u/(u+2), u = expm1(2|x|) as a double-double, below 1; 1 - 2/(u+2)]
//   f64_asinh      1.00 ulp  [log1p / log]
//   f64_acosh      1.00 ulp  [log1p(t + sqrt(2t + t^2)) in double-double, t = x - 1, to 2; log]
//   f64_atanh      1.00 ulp  [log1p(2|x| / (1 - |x|)) / 2 in double-double]
//   f64_pow        1.00 ulp  [C99 special cases; y = 1/2: sqrt, y = -1/2: 1 / sqrt correctly
//                             rounded; else exp(y * log|x|) in double-double: 0.51 ulp of exact]
//   f64_hypot      1.00 ulp  [scaled by a power of 2, sum of squares in double-double]
//   f64_logaddexp  2.00 ulp  [max + log1p(exp(-|a - b|))]
//   f64_logaddexp2 2.00 ulp  [max + log1p(exp2(-|a - b|)) / ln2]
//   f64_sqrt       0.00 ulp  [built-in sqrt; subnormals scaled first (lavapipe's is inexact there)]
//   f64_fmod       exact     [C fmod, sign of a: long division of the integer significands,
//                             11+ bits a step (<= 191 steps), quotients through f64]
//   f64_divmod     exact     [NumPy's npy_divmod step for step: vec2(floor quotient, remainder)]
//   f64_remainder  exact     [np.remainder: npy_divmod's remainder (sign of b); NaN for b = 0]
//   f64_floor_divide exact   [np.floor_divide: npy_divmod's quotient; a / b (inf, NaN) for b = 0]
//   ("exact": bit for bit NumPy's float64 result, NaN payloads aside, given IEEE +, -, /, floor.)
//   f64_isnan, f64_isinf, f64_isfinite, f64_signbit, f64_copysign, f64_sign, f64_nextafter,
//   f64_nan, f64_inf: exact bit operations (f64_sign(+-0) = +0, as NumPy).
// The WGSL built-ins floor, ceil, trunc, round (half to even), abs and the operators x * x,
// 1 / x, x / y are bit for bit NumPy's on lavapipe's f64 (checked by test_f64math.py), so the
// backend's float64 rows use them as they are; no f64_ twins are needed.
// Subnormals: lavapipe keeps f64 subnormals in arithmetic (inputs and results are
// IEEE-exact there); a driver that flushes them would flush these functions' too.
// sin, cos, tan: accurate (the bound above) for every finite x; the reduction for |x| >= 2^20
// (f64m_trig_reduce_big) is Payne-Hanek in integer arithmetic, exact to 2^-139 in quadrants.

fn f64_bits(x: f64) -> u64 { return bitcast<u64>(x); }
fn f64_isnan(x: f64) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu; }
fn f64_isinf(x: f64) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) == 0x7ff0000000000000lu; }
fn f64_isfinite(x: f64) -> bool { return (bitcast<u64>(x) & 0x7ff0000000000000lu) != 0x7ff0000000000000lu; }
fn f64_signbit(x: f64) -> bool { return (bitcast<u64>(x) >> 63u) != 0lu; }
fn f64_nan() -> f64 { return bitcast<f64>(0x7ff8000000000000lu); }
fn f64_inf() -> f64 { return bitcast<f64>(0x7ff0000000000000lu); }
fn f64_copysign(x: f64, y: f64) -> f64 {
  return bitcast<f64>((bitcast<u64>(x) & 0x7ffffffffffffffflu) | (bitcast<u64>(y) & 0x8000000000000000lu));
}

// common.wgsl's f_trunc and f_round (why they avoid WGSL's trunc() and round() is said there).
fn f64_trunc(x: f64) -> f64 { return f64_copysign(floor(abs(x)), x); }
fn f64_round(x: f64) -> f64 {
  let a = abs(x);
  var r = floor(a);
  let d = a - r;  // exact below 2^53; NaN for an infinite x, which keeps r
  if (d > 0.5 || (d == 0.5 && floor(r * 0.5) * 2.0 != r)) { r = r + 1.0; }
  return f64_copysign(r, x);
}

// NumPy's sign: +-1, NaN for NaN, and +0.0 for both zeros. (Built from bits: lavapipe compiled
// the comparison chain `x > 0 ? 1 : x < 0 ? -1 : 0` to a sign operation returning -0.0 for +0.0.)
fn f64_sign(x: f64) -> f64 {
  let u = bitcast<u64>(x);
  if (f64_isnan(x)) { return x; }
  if ((u & 0x7ffffffffffffffflu) == 0lu) { return bitcast<f64>(0lu); }
  return bitcast<f64>((u & 0x8000000000000000lu) | 0x3ff0000000000000lu);
}
fn f64_nextafter(a: f64, b: f64) -> f64 {
  if (f64_isnan(a) || f64_isnan(b)) { return f64_nan(); }
  if (a == b) { return b; }
  let ba = bitcast<u64>(a);
  if ((ba & 0x7ffffffffffffffflu) == 0lu) { return bitcast<f64>((bitcast<u64>(b) & 0x8000000000000000lu) | 1lu); }
  if ((a < b) == (a > 0.0)) { return bitcast<f64>(ba + 1lu); }
  return bitcast<f64>(ba - 1lu);
}

// x, hidden from the optimiser: Mesa's NIR (and other drivers' compilers) treat float
// ops as reassociable unless SPIR-V marks them NoContraction, which naga never does, and
// fold the error terms of two_sum and friends ((a + b) - a -> b) to zero. The select on a
// NaN payload that never occurs here cannot be evaluated at compile time.
// NOTE: SPIR-V also lets a driver contract a * b + c into one fma (NVIDIA's does), so an
// error-free transformation takes its operands and every intermediate it rounds through
// f64m_opaque: a product passed in is rounded once, as the formula assumes, and no step can
// be fused or reordered. Explicit fma is no way out: Vulkan need not fuse it, and lavapipe's
// is not (fma(a, b, -a * b) is 0 there). The split products (f64m_hi) are exact, so a
// contracted one rounds the same.
fn f64m_opaque(x: f64) -> f64 {
  let b = bitcast<u64>(x);
  return bitcast<f64>(b + select(0lu, 1lu, b == 0x7ff0123456789abclu));
}

// 2^k for -1022 <= k <= 1023.
fn f64m_p2(k: i32) -> f64 { return bitcast<f64>(u64(u32(k + 1023)) << 52u); }
// y * 2^k with a single rounding for |y| in [2^-60, 2^60] and any k.
fn f64m_scale(y: f64, k: i32) -> f64 {
  var r = y;
  var n = k;
  if (n > 1023) {
    r = r * f64m_p2(1023);
    n = min(n - 1023, 1023);
  } else if (n < -1000) {
    let m = max(n + 600, -1022);
    r = r * f64m_p2(m);
    n = max(n - m, -1022);
  }
  return r * f64m_p2(n);
}
// The high part of x: its top 32 bits (21 significant bits), so products of two are exact.
fn f64m_hi(x: f64) -> f64 { return bitcast<f64>(bitcast<u64>(x) & 0xffffffff00000000lu); }
// a + b = s + e exactly (Knuth).
fn f64m_two_sum(a0: f64, b0: f64) -> vec2<f64> {
  let a = f64m_opaque(a0);
  let b = f64m_opaque(b0);
  let s = f64m_opaque(a + b);
  let bb = f64m_opaque(s - a);
  return vec2<f64>(s, f64m_opaque(a - f64m_opaque(s - bb)) + f64m_opaque(b - bb));
}
// a * b = p + e, e to about 2^-70 relative (exact but for the 32x32-bit low product).
fn f64m_two_prod(a0: f64, b0: f64) -> vec2<f64> {
  let a = f64m_opaque(a0);
  let b = f64m_opaque(b0);
  let p = f64m_opaque(a * b);
  let ah = f64m_hi(a);
  let al = f64m_opaque(a - ah);
  let bh = f64m_hi(b);
  let bl = f64m_opaque(b - bh);
  let e1 = f64m_opaque(f64m_opaque(ah * bh - p) + ah * bl);
  return vec2<f64>(p, f64m_opaque(e1 + al * bh) + al * bl);
}
// (ah + al) * (bh + bl) as a normalised double-double.
fn f64m_dd_mul(ah: f64, al: f64, bh: f64, bl: f64) -> vec2<f64> {
  let p = f64m_two_prod(ah, bh);
  let lo = f64m_opaque(p.y + (ah * bl + al * bh));
  let h = f64m_opaque(p.x + lo);
  return vec2<f64>(h, lo - f64m_opaque(h - p.x));
}

const F64M_LN2HI: f64 = 0.6931471806019545;     // 32 significant bits: k * LN2HI is exact
const F64M_LN2LO: f64 = -4.2009150726810846e-11;
const F64M_LN2: f64 = 0.6931471805599453;
const F64M_LN2_L: f64 = 2.3190468138462996e-17;
const F64M_INVLN2: f64 = 1.4426950408889634;
const F64M_INVLN2_L: f64 = 2.0355273740931033e-17;
const F64M_INVLN10: f64 = 0.4342944819032518;
const F64M_INVLN10_L: f64 = 1.098319650216765e-17;
const F64M_PIO2: f64 = 1.5707963267948966;
const F64M_PIO2_L: f64 = 6.123233995736766e-17;
const F64M_PI: f64 = 3.141592653589793;
const F64M_PI_L: f64 = 1.2246467991473532e-16;
const F64M_PIO4: f64 = 0.7853981633974483;
const F64M_PIO4_L: f64 = 3.061616997868383e-17;
const F64M_3PIO4: f64 = 2.356194490192345;
const F64M_3PIO4_L: f64 = 9.184850993605148e-17;

// ---- exp family ----

// expm1(r) for |r| <= 0.35 (Taylor series to r^15: error below 2^-60 relative).
fn f64m_expm1_poly(r: f64) -> f64 { return r + f64m_expm1_tail(r); }
// expm1(r) - r.
fn f64m_expm1_tail(r: f64) -> f64 {
  return r * r * (((((((((((((7.647163731819816e-13 * r + 1.1470745597729725e-11) * r + 1.6059043836821613e-10) * r + 2.08767569878681e-09) * r + 2.505210838544172e-08) * r + 2.755731922398589e-07) * r + 2.7557319223985893e-06) * r + 2.48015873015873e-05) * r + 0.0001984126984126984) * r + 0.001388888888888889) * r + 0.008333333333333333) * r + 0.041666666666666664) * r + 0.16666666666666666) * r + 0.5);
}
// (expm1(r) - r - r^2/2) / r^3 for |r| <= 0.35: the tail's polynomial without its first term.
fn f64m_expm1_p3(r: f64) -> f64 {
  return (((((((((((7.647163731819816e-13 * r + 1.1470745597729725e-11) * r + 1.6059043836821613e-10) * r + 2.08767569878681e-09) * r + 2.505210838544172e-08) * r + 2.755731922398589e-07) * r + 2.7557319223985893e-06) * r + 2.48015873015873e-05) * r + 0.0001984126984126984) * r + 0.001388888888888889) * r + 0.008333333333333333) * r + 0.041666666666666664) * r + 0.16666666666666666;
}
// exp(h + l) * 2^s, |l| <= 2^-40 |h|, for -746 < h < 710.5 (over- and underflow come
// out of the final scaling with one rounding). exp(r + c) = 1 + r + r^2/2 + r^3 P(r) +
// c (1 + expm1(r)) is summed as a double-double (1 + r and + r^2/2 exact, the rest, below
// 0.008, to 2^-60) and rounded once: 0.5 + 2^-7 ulp at most, before a subnormal result's
// second rounding. (Rounding 1 + expm1(r) with expm1(r) already rounded cost up to 1 ulp.)
fn f64m_exp_dd(h: f64, l: f64, s: i32) -> f64 {
  let k = floor(h * F64M_INVLN2 + 0.5);
  let hi = f64m_opaque(h - k * F64M_LN2HI);
  let lo = f64m_opaque(k * F64M_LN2LO - l);
  let r = f64m_opaque(hi - lo);
  let c = f64m_opaque(hi - r) - lo;
  let r2 = f64m_two_prod(r, r);
  let t3 = r * r2.x * f64m_expm1_p3(r);
  let a = f64m_two_sum(1.0, r);
  let b = f64m_two_sum(a.x, 0.5 * r2.x);
  let e = (r + 0.5 * r2.x) + t3;
  let low = f64m_opaque(a.y + b.y) + ((0.5 * r2.y + t3) + c * (1.0 + e));
  let y = b.x + low;
  return f64m_scale(y, i32(k) + s);
}
fn f64_exp(x: f64) -> f64 {
  if (f64_isnan(x)) { return x; }
  if (x > 709.782712893384) { return f64_inf(); }
  if (x < -746.0) { return 0.0; }
  return f64m_exp_dd(x, 0.0, 0);
}
fn f64_exp2(x: f64) -> f64 {
  if (f64_isnan(x)) { return x; }
  if (x >= 1024.0) { return f64_inf(); }
  if (x < -1076.0) { return 0.0; }
  let p = f64m_dd_mul(x, 0.0, F64M_LN2, F64M_LN2_L);
  return f64m_exp_dd(p.x, p.y, 0);
}
fn f64_expm1(x: f64) -> f64 {
  if (f64_isnan(x)) { return x; }
  if (x > 709.782712893384) { return f64_inf(); }
  if (x < -38.0) { return -1.0; }
  if (abs(x) < 5.551115123125783e-17) { return x; }
  let k = floor(x * F64M_INVLN2 + 0.5);
  if (abs(k) <= 53.0) { return f64m_expm1_dd(x).x; }
  let hi = f64m_opaque(x - k * F64M_LN2HI);
  let lo = f64m_opaque(k * F64M_LN2LO);
  let r = f64m_opaque(hi - lo);
  let c = f64m_opaque(hi - r) - lo;
  let em = f64m_expm1_poly(r);
  let e = em + c * (1.0 + em);
  let ki = i32(k);
  if (ki > 56) { return f64m_scale(1.0 + e, ki); }
  let two = f64m_p2(ki);
  return (two - 1.0) + two * e;
}

// a + b = s + e for |a| >= |b| (or a = 0).
fn f64m_fast_two_sum(a0: f64, b0: f64) -> vec2<f64> {
  let a = f64m_opaque(a0);
  let b = f64m_opaque(b0);
  let s = f64m_opaque(a + b);
  return vec2<f64>(s, b - f64m_opaque(s - a));
}
// (nh + nl) / (dh + dl) for normalised double-doubles, to about 2^-100 relative before the
// final rounding of q + r / dh.
fn f64m_dd_div(nh: f64, nl: f64, dh: f64, dl: f64) -> f64 {
  let q = f64m_opaque(nh / dh);
  let p = f64m_two_prod(q, dh);
  let r = f64m_opaque(f64m_opaque(f64m_opaque(nh - p.x) - p.y) + nl) - q * dl;
  return q + r / dh;
}
// expm1(x) as a double-double for x = k ln2 + r, |k| <= 53 (2^k - 1 exact), |r| <= ln2/2:
// relative error about 2^-54 (the polynomial tail's rounding; r + tail is not rounded).
fn f64m_expm1_dd(x: f64) -> vec2<f64> {
  let k = floor(x * F64M_INVLN2 + 0.5);
  let hi = f64m_opaque(x - k * F64M_LN2HI);
  let lo = f64m_opaque(k * F64M_LN2LO);
  let r = f64m_opaque(hi - lo);
  let c = f64m_opaque(hi - r) - lo;
  let em = f64m_two_sum(r, f64m_expm1_tail(r));
  let el = em.y + c * (1.0 + em.x);   // expm1(r + c) = em + c (1 + em)
  let two = f64m_p2(i32(k));
  let sm = f64m_two_sum(two - 1.0, two * em.x);   // 2^k (1 + e) - 1
  return f64m_fast_two_sum(sm.x, sm.y + two * el);
}

// ---- log family ----

const F64M_LOG_R = array<f64, 49>(
  1.333343505859375, 1.306121826171875, 1.279998779296875, 1.254913330078125,
  1.23077392578125, 1.207550048828125, 1.1851806640625, 1.16363525390625,
  1.142852783203125, 1.122802734375, 1.10345458984375, 1.084747314453125,
  1.066680908203125, 1.0491943359375, 1.032257080078125, 1.015869140625,
  1.0, 0.984619140625, 0.969696044921875, 0.955230712890625,
  0.9411773681640625, 0.9275360107421875, 0.9142913818359375, 0.9014129638671875,
  0.888885498046875, 0.876708984375, 0.8648681640625, 0.85333251953125,
  0.84210205078125, 0.8311614990234375, 0.8205108642578125, 0.81011962890625,
  0.8000030517578125, 0.790130615234375, 0.780487060546875, 0.771087646484375,
  0.76190185546875, 0.7529449462890625, 0.7441864013671875, 0.735626220703125,
  0.7272796630859375, 0.7191009521484375, 0.7111053466796875, 0.7032928466796875,
  0.695648193359375, 0.68817138671875, 0.68084716796875, 0.6736907958984375,
  0.6666717529296875);
const F64M_LOG_H = array<f64, 49>(
  -0.2876897018172085, -0.26706230841177336, -0.24685912425675463, -0.22706651050031124,
  -0.20764317946823418, -0.18859355399049887, -0.16989522209085586, -0.15154894445242978,
  -0.13352757791998102, -0.1158280008205801, -0.09844579484278011, -0.08134706996440383,
  -0.06455187248887118, -0.04802257053766061, -0.031747744639809145, -0.015744542263597568,
  0.0, 0.015500371845975568, 0.03077261234152484, 0.045802383499500575,
  0.06062366814257318, 0.07522365965619505, 0.08960595982584349, 0.10379178690401636,
  0.11778685036092505, 0.13158017249326087, 0.14517819515450822, 0.15860598385140973,
  0.1718540716312008, 0.1849311600203483, 0.19782812751855308, 0.21057335221303203,
  0.22313973662422007, 0.23555701144780175, 0.24783711757935242, 0.25995323291171085,
  0.27193753018818334, 0.2837631663530174, 0.2954637360567914, 0.307033141559457,
  0.318444194420845, 0.3297535247910755, 0.34093469323513836, 0.3519819067995327,
  0.3629112157516379, 0.3737173634683552, 0.38441742097260145, 0.3949840331269024,
  0.4054574787427368);
const F64M_LOG_L = array<f64, 49>(
  -7.567042059562289e-18, 7.365055412661054e-18, -1.33283129313589e-17, -7.634307577441774e-18,
  -2.8013317387455135e-18, 2.9146632450942526e-18, -8.765004722378302e-18, -4.877838582336781e-18,
  -5.587347935162124e-18, 2.8749783918415243e-19, -2.499616264940456e-18, -6.052857264268859e-18,
  4.165466184807428e-18, 3.194783092292503e-18, -2.749105522343307e-18, 1.5437739398573666e-19,
  0.0, 2.5046199576733797e-19, 1.3322939890253754e-18, -2.1079338626768683e-18,
  2.3532822213382207e-18, -5.9260866864334245e-18, -1.5594560446906389e-18, 5.2745933497969984e-18,
  3.4288136342328803e-18, 1.871195280907379e-18, -1.0261245354665822e-17, 1.1546124658307371e-17,
  1.2481316195795335e-17, 9.80595644832726e-18, -1.041686411267476e-17, 1.2231824499365868e-17,
  1.6064088061581793e-19, -4.772289642220212e-19, -1.2143088792577745e-17, -5.6479586029620565e-18,
  1.9287089654504147e-17, -6.651998810921697e-18, -2.168224866355139e-17, -1.2961146225414402e-18,
  1.555202412990181e-17, 2.1265381260567627e-18, -2.7020213210152556e-17, -1.350028557073549e-17,
  -1.4553199543658434e-17, 2.2125332067322965e-17, -9.18233509599419e-18, 6.60422420844528e-18,
  1.5623426078900708e-17);
const F64M_ATAN_H = array<f64, 17>(
  0.0, 0.06241880999595735, 0.12435499454676144, 0.18534794999569476,
  0.24497866312686414, 0.3028848683749714, 0.35877067027057225, 0.4124104415973873,
  0.4636476090008061, 0.5123894603107377, 0.5585993153435624, 0.6022873461349642,
  0.6435011087932844, 0.6823165548747481, 0.7188299996216245, 0.7531512809621944,
  0.7853981633974483);
const F64M_ATAN_L = array<f64, 17>(
  0.0, -1.5490756308295046e-18, -3.1253241424539383e-18, 4.180692268843079e-18,
  1.0698755618734451e-17, -1.1010827903001369e-17, -2.4623815582638635e-17, -1.587652227770689e-17,
  2.2698777452961687e-17, -2.5462781472855804e-17, -5.4556305485916264e-18, 2.950430737228402e-17,
  1.5834785051444286e-17, 6.943223671560008e-18, -2.1478388444456983e-17, -2.4256934659182068e-17,
  3.061616997868383e-17);

// log(x) as a double-double (h, l), |error| < 2^-66 |log x|, for finite x > 0.
// x = 2^e m, m in [0.75, 1.5); m = c (1 + t) with c = k/64 taken as 1/r (r: 16 bits),
// so t = m r - 1 is exact as a double-double; log m = log(1/r) (table) + log1p(t).
// (tc: a correction added to t, for log1p: the rounding error of 1 + x, divided by 1 + x.)
fn f64m_log_dd(x: f64, tc: f64) -> vec2<f64> {
  var b = bitcast<u64>(x);
  var e: i32 = 0;
  if (b < 0x0010000000000000lu) {
    b = bitcast<u64>(x * 18014398509481984.0);
    e = -54;
  }
  e = e + i32(u32(b >> 52u)) - 1023;
  var m = bitcast<f64>((b & 0x000ffffffffffffflu) | 0x3ff0000000000000lu);
  if (m >= 1.5) {
    m = m * 0.5;
    e = e + 1;
  }
  let idx = i32(floor(m * 64.0 + 0.5)) - 48;
  let r = F64M_LOG_R[idx];
  let mh = f64m_hi(m);
  let ml = m - mh;
  let ts = f64m_two_sum(mh * r - 1.0, ml * r);  // both products exact
  let th = ts.x;
  let tl = ts.y + tc * (m * r);
  // log1p(th + tl) = th - th^2/2 + th^3 P(th) + tl (1 - th)
  let thh = f64m_hi(th);
  let thl = th - thh;
  let q = f64m_two_sum(thh * thh, 2.0 * thh * thl);
  let qh = 0.5 * q.x;
  let ql = 0.5 * f64m_opaque(q.y + thl * thl);
  let t = th;
  let tail = t * t * t * (((((((((-0.08333333333333333 * t + 0.09090909090909091) * t + -0.1) * t + 0.1111111111111111) * t + -0.125) * t + 0.14285714285714285) * t + -0.16666666666666666) * t + 0.2) * t + -0.25) * t + 0.3333333333333333);
  let s = f64m_two_sum(th, -qh);
  let slo = s.y + (((tl - th * tl) - ql) + tail);
  let fe = f64(e);
  let a = f64m_two_sum(fe * F64M_LN2HI, F64M_LOG_H[idx]);
  let c = f64m_two_sum(a.x, s.x);
  let low = f64m_opaque(f64m_opaque(f64m_opaque(f64m_opaque(a.y + c.y) + slo) + F64M_LOG_L[idx]) + fe * F64M_LN2LO);
  let h = f64m_opaque(c.x + low);
  return vec2<f64>(h, low - f64m_opaque(h - c.x));
}
// NaN, negative, zero and infinity cases of the logarithms; (1, 0) marks "finite positive".
fn f64m_log_special(x: f64) -> vec2<f64> {
  if (f64_isnan(x) || x < 0.0) { return vec2<f64>(0.0, f64_nan()); }
  if (x == 0.0) { return vec2<f64>(0.0, -f64_inf()); }
  if (f64_isinf(x)) { return vec2<f64>(0.0, x); }
  return vec2<f64>(1.0, 0.0);
}
fn f64_log(x: f64) -> f64 {
  let sp = f64m_log_special(x);
  if (sp.x == 0.0) { return sp.y; }
  return f64m_log_dd(x, 0.0).x;
}
fn f64_log2(x: f64) -> f64 {
  let sp = f64m_log_special(x);
  if (sp.x == 0.0) { return sp.y; }
  let l = f64m_log_dd(x, 0.0);
  return f64m_dd_mul(l.x, l.y, F64M_INVLN2, F64M_INVLN2_L).x;
}
fn f64_log10(x: f64) -> f64 {
  let sp = f64m_log_special(x);
  if (sp.x == 0.0) { return sp.y; }
  let l = f64m_log_dd(x, 0.0);
  return f64m_dd_mul(l.x, l.y, F64M_INVLN10, F64M_INVLN10_L).x;
}
fn f64_log1p(x: f64) -> f64 {
  if (f64_isnan(x) || x < -1.0) { return f64_nan(); }
  if (x == -1.0) { return -f64_inf(); }
  if (f64_isinf(x)) { return x; }
  if (abs(x) < 1.1102230246251565e-16) { return x; }
  let u = f64m_opaque(1.0 + x);
  // x = u + c exactly, c the rounding error of 1 + x
  var c: f64;
  if (x > 1.0) { c = 1.0 - f64m_opaque(u - x); } else { c = x - f64m_opaque(u - 1.0); }
  return f64m_log_dd(u, c / u).x;
}

// ---- inverse trigonometric ----

// atan(t) for 0 <= t <= 1 as a double-double.
fn f64m_atan_dd(t: f64) -> vec2<f64> {
  if (t < 0.125) {
    let z = t * t;
    return vec2<f64>(t, t * z * ((((((((-0.05263157894736842 * z + 0.058823529411764705) * z + -0.06666666666666667) * z + 0.07692307692307693) * z + -0.09090909090909091) * z + 0.1111111111111111) * z + -0.14285714285714285) * z + 0.2) * z + -0.3333333333333333));
  }
  let k = floor(t * 16.0 + 0.5);
  let c = k * 0.0625;
  let u = (t - c) / (1.0 + t * c);
  let z = u * u;
  let i = i32(k);
  return vec2<f64>(F64M_ATAN_H[i], F64M_ATAN_L[i] + (u + u * z * (((((0.07692307692307693 * z + -0.09090909090909091) * z + 0.1111111111111111) * z + -0.14285714285714285) * z + 0.2) * z + -0.3333333333333333)));
}
// (ch + cl) - (vh + vl) as a double-double.
fn f64m_dd_sub(ch: f64, cl: f64, vh: f64, vl: f64) -> vec2<f64> {
  let s = f64m_two_sum(ch, -vh);
  let lo = f64m_opaque(s.y + (cl - vl));
  let h = f64m_opaque(s.x + lo);
  return vec2<f64>(h, lo - f64m_opaque(h - s.x));
}
fn f64_atan(x: f64) -> f64 {
  if (f64_isnan(x)) { return x; }
  let a = abs(x);
  if (a < 1.4901161193847656e-8) { return x; }
  var r: f64;
  if (a > 1.0) {
    let v = f64m_atan_dd(1.0 / a);
    r = (F64M_PIO2 - v.x) + (F64M_PIO2_L - v.y);
  } else {
    let v = f64m_atan_dd(a);
    r = v.x + v.y;
  }
  return f64_copysign(r, x);
}
fn f64_atan2(y: f64, x: f64) -> f64 {
  if (f64_isnan(x) || f64_isnan(y)) { return f64_nan(); }
  if (y == 0.0) {
    if (f64_signbit(x)) { return f64_copysign(F64M_PI, y); }
    return y;
  }
  if (x == 0.0) { return f64_copysign(F64M_PIO2, y); }
  if (f64_isinf(x)) {
    if (f64_isinf(y)) { return f64_copysign(select(F64M_PIO4, F64M_3PIO4, x < 0.0), y); }
    let z: f64 = 0.0;
    return f64_copysign(select(z, F64M_PI, x < 0.0), y);
  }
  if (f64_isinf(y)) { return f64_copysign(F64M_PIO2, y); }
  let ax = abs(x);
  let ay = abs(y);
  var v: vec2<f64>;
  if (ay > ax) {
    let w = f64m_atan_dd(ax / ay);
    v = f64m_dd_sub(F64M_PIO2, F64M_PIO2_L, w.x, w.y);
  } else {
    v = f64m_atan_dd(ay / ax);  // ay / ax may underflow: atan is then the quotient
  }
  if (x < 0.0) { v = f64m_dd_sub(F64M_PI, F64M_PI_L, v.x, v.y); }
  return f64_copysign(v.x + v.y, y);
}
// asin(s) - s for 0 <= s <= 1/2 (z = s^2).
fn f64m_asin_tail(s: f64, z: f64) -> f64 { return s * z * (((((((((((((((((((((((0.002338091892111975 * z + 0.0024894486782468836) * z + 0.00265787063820729) * z + 0.002846178401108942) * z + 0.0030578216492580306) * z + 0.003297059503473485) * z + 0.0035692053938259347) * z + 0.003880964558837669) * z + 0.004240907093679363) * z + 0.004660143486915096) * z + 0.005153309682319905) * z + 0.005740037670841924) * z + 0.006447210311889649) * z + 0.0073125258735988454) * z + 0.008390335809616815) * z + 0.009761609529194078) * z + 0.011551800896139705) * z + 0.01396484375) * z + 0.017352764423076924) * z + 0.022372159090909092) * z + 0.030381944444444444) * z + 0.044642857142857144) * z + 0.075) * z + 0.16666666666666666); }
// sqrt(z) = hi + lo for 0 <= z <= 1/4, to about 2^-70 relative.
fn f64m_sqrt_dd(z: f64) -> vec2<f64> {
  if (z == 0.0) { return vec2<f64>(0.0, 0.0); }
  let s = f64m_opaque(sqrt(z));
  let sh = f64m_hi(s);
  return vec2<f64>(sh, f64m_opaque(z - sh * sh) / (s + sh));  // sh * sh exact
}
fn f64_asin(x: f64) -> f64 {
  let a = abs(x);
  if (f64_isnan(x) || a > 1.0) { return f64_nan(); }
  if (a < 1.4901161193847656e-8) { return x; }
  var r: f64;
  if (a <= 0.5) {
    r = a + f64m_asin_tail(a, a * a);
  } else {
    let z = (1.0 - a) * 0.5;
    let s = f64m_sqrt_dd(z);
    let tail = f64m_asin_tail(s.x + s.y, z);
    r = (F64M_PIO2 - 2.0 * s.x) - (2.0 * (s.y + tail) - F64M_PIO2_L);
  }
  return f64_copysign(r, x);
}
fn f64_acos(x: f64) -> f64 {
  let a = abs(x);
  if (f64_isnan(x) || a > 1.0) { return f64_nan(); }
  if (a <= 0.5) {
    return F64M_PIO2 - (x + (f64m_asin_tail(x, x * x) - F64M_PIO2_L));
  }
  let z = (1.0 - a) * 0.5;
  let s = f64m_sqrt_dd(z);
  let tail = f64m_asin_tail(s.x + s.y, z);
  if (x > 0.0) { return 2.0 * s.x + 2.0 * (s.y + tail); }
  return (F64M_PI - 2.0 * s.x) - (2.0 * (s.y + tail) - F64M_PI_L);
}

// ---- trigonometric ----

const F64M_PIO2_1: f64 = 1.5707963267341256;     // 33 bits
const F64M_PIO2_2: f64 = 6.077100506303966e-11;  // 33 bits
const F64M_PIO2_3: f64 = 2.0222662487959506e-21;
const F64M_2OPI: f64 = 0.6366197723675814;

// 2/pi in binary, 32 bits a word, after 64 zero bits: word k holds the weights
// 2^(63 - 32k) .. 2^(32 - 32k), so words 2.. are 2/pi's first 1216 bits: enough for the
// window of every finite double (f64m_trig_reduce_big reads to the weight 2^-1163).
var<private> F64M_2OPI_BITS: array<u32, 40> = array<u32, 40>(
  0x00000000u, 0x00000000u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u,
  0x3c439041u, 0xfe5163abu, 0xdebbc561u, 0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu,
  0xfe1deb1cu, 0xb129a73eu, 0xe88235f5u, 0x2ebb4484u, 0xe99c7026u, 0xb45f7e41u, 0x3991d639u,
  0x835339f4u, 0x9c845f8bu, 0xbdf9283bu, 0x1ff897ffu, 0xde05980fu, 0xef2f118bu, 0x5a0a6d1fu,
  0x6d367ecfu, 0x27cb09b7u, 0x4f463f66u, 0x9e5fea2du, 0x7527bac7u, 0xebe5f17bu, 0x3d0739f7u,
  0x8a5292eau, 0x6bfb5fb1u, 0x1f8d5d08u, 0x56033046u, 0xfc7b6babu);

// The 32 bits of 2/pi of weights 2^-j .. 2^-(j + 31), the first the top bit (-63 <= j <= 1185).
fn f64m_2opi_bits(j: i32) -> u32 {
  let t = u32(j + 63);
  let k = t >> 5u;
  let sh = t & 31u;
  let joined = (F64M_2OPI_BITS[k] << sh) | (F64M_2OPI_BITS[k + 1u] >> ((32u - sh) & 31u));
  return select(joined, F64M_2OPI_BITS[k], sh == 0u);
}

// Payne-Hanek reduction for |x| >= 2^20 (f64m_trig_reduce's convention). With |x| = m 2^s (m
// the 53-bit integer significand, s >= -32), x 2/pi = m sum_j b_j 2^(s - j) for 2/pi's bits
// b_j: the bits j <= s - 2 add multiples of 4, j = s - 1 and s give the integer
// m (2 b_(s-1) + b_s), and the window V of the 192 bits j = s + 1 .. s + 192 the rest but
// m 2^-192 (< 2^-139): m V / 2^192, whose integer part carries into the quadrant. m V is
// built from 32x32-bit products (m in 32 + 21 bits, V in six words) with u64 column sums.
// The fraction f (rounded to the nearest quadrant, |f| <= 1/2; at worst about 2^-62 for a
// double) is normalised, its top 106 bits taken as the double-double h + l, and multiplied
// by pi/2 as a double-double: relative error about 2^-77 at the worst case, 2^-95 usually.
fn f64m_trig_reduce_big(x: f64) -> vec3<f64> {
  let b = bitcast<u64>(x);
  let s = i32((b >> 52u) & 0x7fflu) - 1075;
  let m = (b & 0xffffffffffffflu) | 0x10000000000000lu;
  let ml = m & 0xfffffffflu;
  let mh = m >> 32u;
  var q = (u32(m) * (f64m_2opi_bits(s - 1) >> 30u)) & 3u;
  var v: array<u32, 6>;  // v[0] the least significant word: bits s + 161 .. s + 192
  for (var k = 0; k < 6; k++) { v[k] = f64m_2opi_bits(s + 161 - 32 * k); }
  var p: array<u32, 6>;  // m V mod 2^192; its bits above go to q
  var c = 0lu;
  for (var k = 0; k < 7; k++) {
    var t1 = 0lu;
    var t2 = 0lu;
    if (k < 6) { t1 = ml * u64(v[k]); }
    if (k > 0) { t2 = mh * u64(v[k - 1]); }
    let sum = (t1 & 0xfffffffflu) + (t2 & 0xfffffffflu) + c;
    if (k < 6) { p[k] = u32(sum); } else { q = q + u32(sum); }
    c = (t1 >> 32u) + (t2 >> 32u) + (sum >> 32u);
  }
  var w0 = (u64(p[5]) << 32u) | u64(p[4]);
  var w1 = (u64(p[3]) << 32u) | u64(p[2]);
  var w2 = (u64(p[1]) << 32u) | u64(p[0]);
  // f >= 1/2: the next quadrant, and 1 - f (~w: 1 - f - 2^-192)
  let up = (w0 >> 63u) != 0lu;
  if (up) {
    q = q + 1u;
    w0 = ~w0;
    w1 = ~w1;
    w2 = ~w2;
  }
  let qq = select(q, 0u - q, x < 0.0) & 3u;  // x < 0: -(q + f) = (-q) - f
  var z = 0u;
  if (w0 == 0lu) {  // (never for a double: |f| > 2^-64)
    w0 = w1;
    w1 = w2;
    z = 64u;
  }
  if (w0 == 0lu) { return vec3<f64>(f64(qq), 0.0, 0.0); }
  let top = u32(w0 >> 32u);
  let lz = select(countLeadingZeros(top), 32u + countLeadingZeros(u32(w0)), top == 0u);
  if (lz > 0u) {
    w0 = (w0 << lz) | (w1 >> (64u - lz));
    w1 = w1 << lz;
  }
  z = z + lz;
  // f = (w0 2^64 + w1) 2^-(128 + z): the top 53 and the next 53 bits, each exact in f64
  let h = f64(w0 >> 11u) * f64m_p2(-53 - i32(z));
  let l = f64(((w0 & 0x7fflu) << 42u) | (w1 >> 22u)) * f64m_p2(-106 - i32(z));
  let r = f64m_dd_mul(h, l, F64M_PIO2, F64M_PIO2_L);
  if (up != (x < 0.0)) { return vec3<f64>(f64(qq), -r.x, -r.y); }
  return vec3<f64>(f64(qq), r.x, r.y);
}

// x = n pi/2 + (rh + rl), |rh + rl| <= pi/4 (about): (n mod 4, rh, rl).
fn f64m_trig_reduce(x0: f64) -> vec3<f64> {
  if (abs(x0) <= 0.7853981633974483) { return vec3<f64>(0.0, x0, 0.0); }
  if (abs(x0) >= 1048576.0) { return f64m_trig_reduce_big(x0); }
  let x = x0;
  let k = floor(x * F64M_2OPI + 0.5);
  // x - k P1 and k P2 are exact (|k| < 2^20); their difference is kept as a double-double.
  let t = f64m_two_sum(x - k * F64M_PIO2_1, -(k * F64M_PIO2_2));  // exact products
  let r = f64m_fast_two_sum(t.x, f64m_opaque(t.y - k * F64M_PIO2_3));
  let q = k - 4.0 * floor(k * 0.25);
  return vec3<f64>(q, r.x, r.y);
}
// sin(rh + rl) = rh + f64m_sin_t(rh, rl).
fn f64m_sin_k(rh: f64, rl: f64) -> f64 { return rh + f64m_sin_t(rh, rl); }
fn f64m_sin_t(rh: f64, rl: f64) -> f64 {
  let z = rh * rh;
  return (rl * (1.0 - 0.5 * z) + rh * z * ((((((((-8.22063524662433e-18 * z + 2.8114572543455206e-15) * z + -7.647163731819816e-13) * z + 1.6059043836821613e-10) * z + -2.505210838544172e-08) * z + 2.7557319223985893e-06) * z + -0.0001984126984126984) * z + 0.008333333333333333) * z + -0.16666666666666666));
}
// cos(rh + rl) = w + t: (w, t).
fn f64m_cos_k(rh: f64, rl: f64) -> f64 {
  let c = f64m_cos_wt(rh, rl);
  return c.x + c.y;
}
fn f64m_cos_wt(rh: f64, rl: f64) -> vec2<f64> {
  let z = rh * rh;
  let hz = 0.5 * z;
  let w = f64m_opaque(1.0 - hz);
  return vec2<f64>(w, f64m_opaque(f64m_opaque(1.0 - w) - hz) + (z * z * ((((((((4.110317623312165e-19 * z + -1.5619206968586225e-16) * z + 4.779477332387385e-14) * z + -1.1470745597729725e-11) * z + 2.08767569878681e-09) * z + -2.755731922398589e-07) * z + 2.48015873015873e-05) * z + -0.001388888888888889) * z + 0.041666666666666664) - rh * rl));
}
fn f64_sin(x: f64) -> f64 {
  if (!f64_isfinite(x)) { return f64_nan(); }
  if (abs(x) < 1.4901161193847656e-8) { return x; }
  let r = f64m_trig_reduce(x);
  let q = i32(r.x);
  var y: f64;
  if ((q & 1) == 0) { y = f64m_sin_k(r.y, r.z); } else { y = f64m_cos_k(r.y, r.z); }
  if (q >= 2) { y = -y; }
  return y;
}
fn f64_cos(x: f64) -> f64 {
  if (!f64_isfinite(x)) { return f64_nan(); }
  let r = f64m_trig_reduce(x);
  let q = i32(r.x);
  var y: f64;
  if ((q & 1) == 0) { y = f64m_cos_k(r.y, r.z); } else { y = f64m_sin_k(r.y, r.z); }
  if (q == 1 || q == 2) { y = -y; }
  return y;
}
fn f64_tan(x: f64) -> f64 {
  if (!f64_isfinite(x)) { return f64_nan(); }
  if (abs(x) < 7.450580596923828e-9) { return x; }
  let r = f64m_trig_reduce(x);
  // sin and cos of the reduced argument as double-doubles, divided in double-double
  let s = f64m_fast_two_sum(r.y, f64m_sin_t(r.y, r.z));
  let cw = f64m_cos_wt(r.y, r.z);
  let c = f64m_fast_two_sum(cw.x, cw.y);
  if ((i32(r.x) & 1) == 0) { return f64m_dd_div(s.x, s.y, c.x, c.y); }
  return -f64m_dd_div(c.x, c.y, s.x, s.y);
}

// ---- hyperbolic ----

fn f64_sinh(x: f64) -> f64 {
  if (f64_isnan(x)) { return x; }
  let ax = abs(x);
  if (ax < 1.4901161193847656e-8) { return x; }
  var r: f64;
  if (ax < 22.0) {   // (u + u / (u + 1)) / 2, u = expm1(|x|) as a double-double
    let u = f64m_expm1_dd(ax);
    let d = f64m_two_sum(u.x, 1.0);
    let v = f64m_dd_div(u.x, u.y, d.x, d.y + u.y);
    let w = f64m_two_sum(u.x, v);
    r = 0.5 * (w.x + (w.y + u.y));
  } else if (ax > 710.5) {
    r = f64_inf();
  } else {
    r = f64m_exp_dd(ax, 0.0, -1);
  }
  return f64_copysign(r, x);
}
fn f64_cosh(x: f64) -> f64 {
  if (f64_isnan(x)) { return x; }
  let ax = abs(x);
  if (ax < 0.34657359027997264) {
    if (ax < 7.450580596923828e-9) { return 1.0; }
    let t = f64_expm1(ax);
    let w = 1.0 + t;
    return 1.0 + (t * t) / (w + w);
  }
  if (ax < 22.0) {
    let e = f64_exp(ax);
    return 0.5 * e + 0.5 / e;
  }
  if (ax > 710.5) { return f64_inf(); }
  return f64m_exp_dd(ax, 0.0, -1);
}
fn f64_tanh(x: f64) -> f64 {
  if (f64_isnan(x)) { return x; }
  let ax = abs(x);
  if (ax < 7.450580596923828e-9) { return x; }
  var r: f64;
  if (ax > 22.0) {
    r = 1.0;
  } else if (ax >= 1.0) {
    r = 1.0 - 2.0 / (f64_expm1(2.0 * ax) + 2.0);
  } else {   // expm1(2|x|) / (expm1(2|x|) + 2) in double-double
    let u = f64m_expm1_dd(2.0 * ax);
    let d = f64m_two_sum(u.x, 2.0);
    r = f64m_dd_div(u.x, u.y, d.x, d.y + u.y);
  }
  return f64_copysign(r, x);
}
fn f64_sigmoid(x: f64) -> f64 {   // common.wgsl's f_sigmoid
  if (f64_isnan(x)) { return x; }
  let e = f64_exp(-abs(x));
  return select(e, 1.0, x >= 0.0) / (1.0 + e);
}
fn f64_silu(x: f64) -> f64 {   // common.wgsl's f_silu, with the cpu backend's float64 constants
  if (f64_isnan(x)) { return x; }
  if (x < -43.0) { return x * f64_exp(x + 86.0) * 4.4737793061811207e-38; }
  return x / (1.0 + f64_exp(-x));
}
fn f64_asinh(x: f64) -> f64 {
  if (f64_isnan(x) || f64_isinf(x)) { return x; }
  let ax = abs(x);
  if (ax < 1.4901161193847656e-8) { return x; }
  var r: f64;
  if (ax > 268435456.0) {
    r = f64_log(ax) + F64M_LN2;
  } else if (ax > 2.0) {
    r = f64_log(2.0 * ax + 1.0 / (sqrt(ax * ax + 1.0) + ax));
  } else {
    let z = ax * ax;
    r = f64_log1p(ax + z / (1.0 + sqrt(1.0 + z)));
  }
  return f64_copysign(r, x);
}
fn f64_acosh(x: f64) -> f64 {
  if (f64_isnan(x) || x < 1.0) { return f64_nan(); }
  if (f64_isinf(x)) { return x; }
  if (x > 268435456.0) { return f64_log(x) + F64M_LN2; }
  if (x > 2.0) { return f64_log(2.0 * x - 1.0 / (x + sqrt(x * x - 1.0))); }
  // log1p(y), y = t + sqrt(2t + t^2), t = x - 1 (exact), with y as a double-double
  if (x == 1.0) { return 0.0; }
  let t = x - 1.0;
  let tt = f64m_two_prod(t, t);
  let q = f64m_two_sum(2.0 * t, tt.x);
  let qh = q.x;
  let ql = q.y + tt.y;
  let sh = sqrt(qh);
  let ss = f64m_two_prod(sh, sh);
  let sl = f64m_opaque(f64m_opaque(f64m_opaque(qh - ss.x) - ss.y) + ql) / (2.0 * sh);
  let y = f64m_two_sum(t, sh);
  return f64m_log1p_dd(y.x, y.y + sl);
}
// log1p(yh + yl) for a double-double with yh > 0 (finite), |yl| <= ulp(yh).
fn f64m_log1p_dd(yh: f64, yl: f64) -> f64 {
  let u = f64m_opaque(1.0 + yh);
  var c: f64;   // 1 + yh = u + c exactly
  if (yh > 1.0) { c = 1.0 - f64m_opaque(u - yh); } else { c = yh - f64m_opaque(u - 1.0); }
  return f64m_log_dd(u, f64m_opaque(c + yl) / u).x;
}
fn f64_atanh(x: f64) -> f64 {
  let ax = abs(x);
  if (f64_isnan(x) || ax > 1.0) { return f64_nan(); }
  if (ax == 1.0) { return f64_copysign(f64_inf(), x); }
  if (ax < 7.450580596923828e-9) { return x; }
  // log1p(y) / 2, y = 2|x| / (1 - |x|) as a double-double
  let d = f64m_two_sum(1.0, -ax);
  let n = ax + ax;
  let yh = f64m_opaque(n / d.x);
  let p = f64m_two_prod(yh, d.x);
  let yl = f64m_opaque(f64m_opaque(f64m_opaque(n - p.x) - p.y) - yh * d.y) / d.x;
  return f64_copysign(0.5 * f64m_log1p_dd(yh, yl), x);
}

// ---- sqrt, hypot, pow, logaddexp ----

fn f64_sqrt(x: f64) -> f64 {
  if (f64_isnan(x) || x < 0.0) { return f64_nan(); }
  if (f64_isinf(x) || x == 0.0) { return x; }
  if (x < 2.2250738585072014e-308) { return sqrt(x * 18014398509481984.0) * 7.450580596923828e-9; }
  return sqrt(x);
}
fn f64_hypot(a: f64, b: f64) -> f64 {
  if (f64_isinf(a) || f64_isinf(b)) { return f64_inf(); }
  if (f64_isnan(a) || f64_isnan(b)) { return f64_nan(); }
  let x = max(abs(a), abs(b));
  let y = min(abs(a), abs(b));
  if (y == 0.0) { return x; }
  // scale so that x is in [1, 2): exact unless y / x < 2^-1000, when y no longer counts
  let ex = i32(u32(bitcast<u64>(x) >> 52u)) - 1023;  // x >= y > 0; x subnormal: ex = -1023
  let k = clamp(ex, -1020, 1020);
  let xs = x * f64m_p2(-k);
  let ys = y * f64m_p2(-k);
  let x2 = f64m_two_prod(xs, xs);
  let y2 = f64m_two_prod(ys, ys);
  let s = f64m_two_sum(x2.x, y2.x);
  let sh = s.x;
  let sl = f64m_opaque(s.y + x2.y) + y2.y;
  var r = f64m_opaque(sqrt(sh));
  let r2 = f64m_two_prod(r, r);
  r = r + f64m_opaque(f64m_opaque(f64m_opaque(sh - r2.x) - r2.y) + sl) / (r + r);
  return f64m_scale(r, k);
}
// 1 / sqrt(x) for finite x > 0, correctly rounded unless within about 2^-40 ulp of a midpoint:
// x = m 2^(2j), m in [1, 4); q = 1 / sqrt(m) to about 1 ulp, then one Newton step on the
// residual d = m q^2 - 1 (exact products): q (1 - d/2 + 3d^2/8), rounded once; 2^-j is exact.
fn f64m_rsqrt(x: f64) -> f64 {
  var b = bitcast<u64>(x);
  var j: i32 = 0;
  if (b < 0x0010000000000000lu) {
    b = bitcast<u64>(x * 18014398509481984.0);   // 2^54
    j = -27;
  }
  let e = i32(u32(b >> 52u)) - 1023;
  let eh = e >> 1u;   // floor(e / 2)
  let m = bitcast<f64>((b & 0x000ffffffffffffflu) | (u64(u32(e - 2 * eh + 1023)) << 52u));
  j = j + eh;
  let q = f64m_opaque(1.0 / sqrt(m));
  let q2 = f64m_two_prod(q, q);
  let p = f64m_two_prod(m, q2.x);
  let d = f64m_opaque(f64m_opaque(p.x - 1.0) + p.y) + m * q2.y;
  return (q - q * (0.5 * d - 0.375 * d * d)) * f64m_p2(-j);
}
fn f64m_is_odd_int(y: f64) -> bool {
  if (abs(y) >= 9007199254740992.0 || trunc(y) != y) { return false; }
  let h = y * 0.5;
  return trunc(h) != h;
}
// C99 pow special cases, then exp(y * log|x|) with log|x| and the product as double-doubles.
fn f64_pow(x: f64, y: f64) -> f64 {
  if (y == 0.0 || x == 1.0) { return 1.0; }
  if (f64_isnan(x) || f64_isnan(y)) { return f64_nan(); }
  let ax = abs(x);
  let yint = trunc(y) == y;
  let yodd = f64m_is_odd_int(y);
  if (f64_isinf(y)) {
    if (ax == 1.0) { return 1.0; }
    if ((ax > 1.0) == (y > 0.0)) { return f64_inf(); }
    return 0.0;
  }
  if (x == 0.0) {
    if (y < 0.0) { return select(f64_inf(), f64_copysign(f64_inf(), x), yodd); }
    let z: f64 = 0.0;
    return select(z, x, yodd);
  }
  if (f64_isinf(x)) {
    var mag = f64_inf();
    if (y < 0.0) { mag = 0.0; }
    if (x < 0.0 && yodd) { return -mag; }
    return mag;
  }
  if (x < 0.0 && !yint) { return f64_nan(); }
  // x > 0 finite from here on. y = +-1/2 correctly rounded, as sqrt (NumPy's x ** 0.5 takes it).
  if (y == 0.5) { return f64_sqrt(x); }
  if (y == -0.5) { return f64m_rsqrt(x); }
  let l = f64m_log_dd(ax, 0.0);
  let p0 = y * l.x;  // may be +-inf: the double-double product would give NaN
  var r: f64;
  if (p0 > 710.0) {
    r = f64_inf();
  } else if (p0 < -746.0) {
    r = 0.0;
  } else {
    let p = f64m_dd_mul(y, 0.0, l.x, l.y);
    r = f64m_exp_dd(p.x, p.y, 0);
  }
  if (x < 0.0 && yodd) { return -r; }
  return r;
}
fn f64_bce_with_logits(x: f64, t: f64) -> f64 {   // common.wgsl's f_bce_with_logits
  if (f64_isnan(x) || f64_isnan(t)) { return f64_nan(); }
  let c = select(-t, 1.0 - t, x >= 0.0);
  return c * x + f64_log1p(f64_exp(-abs(x)));
}
fn f64_logaddexp(a: f64, b: f64) -> f64 {
  if (f64_isnan(a) || f64_isnan(b)) { return f64_nan(); }
  if (a == b) { return a + F64M_LN2; }
  let t = a - b;
  if (t > 0.0) { return a + f64_log1p(f64_exp(-t)); }
  return b + f64_log1p(f64_exp(t));
}
fn f64_logaddexp2(a: f64, b: f64) -> f64 {
  if (f64_isnan(a) || f64_isnan(b)) { return f64_nan(); }
  if (a == b) { return a + 1.0; }
  let t = a - b;
  if (t > 0.0) { return a + f64_log1p(f64_exp2(-t)) * F64M_INVLN2; }
  return b + f64_log1p(f64_exp2(t)) * F64M_INVLN2;
}

// ---- fmod, remainder, floor_divide (NumPy's npy_divmod) ----

// The position of the top set bit of 0 < x < 2^53 (exact: f64(x) is).
fn f64m_msb53(x: u64) -> u32 { return u32(bitcast<u64>(f64(x)) >> 52u) - 1023u; }
// x != 0 (NaN included, as C's `if (x)`), x < 0 (false for NaN, as C's isless(x, 0)): bit tests,
// so that no compiler can assume away NaNs or signed zeros.
fn f64m_nonzero(x: f64) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) != 0lu; }
fn f64m_neg(x: f64) -> bool {
  let u = bitcast<u64>(x);
  return u > 0x8000000000000000lu && u <= 0xfff0000000000000lu;
}
// a / b for b = +-0: inf with the sign of a*b, NaN for a = 0 or NaN (IEEE, whatever the driver's
// division does).
fn f64m_div_zero(a: f64, b: f64) -> f64 {
  if (f64_isnan(a) || !f64m_nonzero(a)) { return f64_nan(); }
  return bitcast<f64>(0x7ff0000000000000lu | ((bitcast<u64>(a) ^ bitcast<u64>(b)) & 0x8000000000000000lu));
}

// x mod m for 0 < m < 2^53 (fm = f64(m)) and x < 2^53 or x / m < 2^50: the quotient through
// f64 is off by at most one (2^-53 relative for x < 2^53; else < 2^50 * 2^-52), then corrected
// in wrapping u64 arithmetic. No integer `%`.
fn f64m_umod(x: u64, m: u64, fm: f64) -> u64 {
  let q = u64(floor(f64(x) / fm));
  var r = x - q * m;
  if (r >= 0x8000000000000000lu) { r = r + m; } else if (r >= m) { r = r - m; }
  return r;
}

// C fmod (sign of a), exact. |a| = ma 2^(ea-1075), |b| = mb 2^(eb-1075) with integer
// significands ma, mb < 2^53 (ea, eb >= 1; subnormals have no hidden bit); for |a| > |b|,
// ea >= eb and fmod = (ma 2^(ea-eb) mod mb) 2^(eb-1075): long division, shifting in s bits a
// step (s = 11 for a normal b, up to 50 for a subnormal one; (r << s) < 2^64 for r < mb),
// at most 191 steps.
fn f64_fmod(a: f64, b: f64) -> f64 {
  let ua = bitcast<u64>(a);
  let sx = ua & 0x8000000000000000lu;
  let xa = ua & 0x7ffffffffffffffflu;
  let xb = bitcast<u64>(b) & 0x7ffffffffffffffflu;
  if (xa >= 0x7ff0000000000000lu || xb > 0x7ff0000000000000lu || xb == 0lu) { return f64_nan(); }
  if (xa <= xb) {   // |a| <= |b|, b = inf included
    if (xa == xb) { return bitcast<f64>(sx); }
    return a;
  }
  var ea = u32(xa >> 52u);
  var eb = u32(xb >> 52u);
  var ma = xa & 0x000ffffffffffffflu;
  var mb = xb & 0x000ffffffffffffflu;
  if (ea == 0u) { ea = 1u; } else { ma = ma | 0x0010000000000000lu; }
  if (eb == 0u) { eb = 1u; } else { mb = mb | 0x0010000000000000lu; }
  let fb = f64(mb);
  let s = min(63u - f64m_msb53(mb), 50u);
  var r = ma;
  if (ma >= mb) { r = f64m_umod(ma, mb, fb); }
  var d = ea - eb;
  loop {
    if (d == 0u || r == 0lu) { break; }
    let k = min(d, s);
    r = f64m_umod(r << k, mb, fb);
    d = d - k;
  }
  if (r == 0lu) { return bitcast<f64>(sx); }
  let p = f64m_msb53(r);
  let e = i32(p + eb) - 52;   // biased exponent of r 2^(eb-1075) if normal
  var bits: u64;
  if (e >= 1) {
    bits = (r << (52u - p)) + (u64(u32(e - 1)) << 52u);
  } else {
    bits = r << (eb - 1u);
  }
  return bitcast<f64>(bits | sx);
}

// NumPy's npy_divmod: (floor quotient, remainder with the sign of b), step for step (the same
// IEEE operations, so the same roundings): mod = fmod(a, b); div = (a - mod) / b; if mod != 0
// and (b < 0) != (mod < 0): mod += b, div -= 1; a zero mod gets b's sign; the quotient is
// floor(div), plus 1 if div - floor(div) > 0.5; a zero quotient gets the sign of a / b.
// For b = +-0: (a / b, NaN).
fn f64_divmod(a: f64, b: f64) -> vec2<f64> {
  var m = f64_fmod(a, b);
  if (!f64m_nonzero(b)) { return vec2<f64>(f64m_div_zero(a, b), m); }
  var d = (a - m) / b;
  if (f64m_nonzero(m)) {
    if (f64m_neg(b) != f64m_neg(m)) {
      m = m + b;
      d = d - 1.0;
    }
  } else {
    m = f64_copysign(0.0, b);
  }
  var fd: f64;
  if (f64m_nonzero(d)) {
    fd = floor(d);
    if (d - fd > 0.5) { fd = fd + 1.0; }
  } else {
    // d = 0: a, b not NaN (else d would be), b != 0, so a / b is not NaN: its sign is the xor.
    fd = bitcast<f64>((bitcast<u64>(a) ^ bitcast<u64>(b)) & 0x8000000000000000lu);
  }
  return vec2<f64>(fd, m);
}
// np.remainder: Python's a % b (sign of b); NaN for b = 0.
fn f64_remainder(a: f64, b: f64) -> f64 { return f64_divmod(a, b).y; }
// np.floor_divide: Python's a // b; a / b for b = 0.
fn f64_floor_divide(a: f64, b: f64) -> f64 { return f64_divmod(a, b).x; }
