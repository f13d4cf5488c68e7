// matmul_tiled.wgsl: out[b] = a[b] @ b[b] for a (B, M, K), b (B, K, N), out (B, M, N), all of one
// floating dtype: float32 and float16 computed in f32 (float16 widened as it is loaded, rounded
// once as it is stored), float64 in f64 ($T below is the compute type).
// A BM x BN output tile per workgroup of (BN / 8) x (BM / 8) threads, 8x8 outputs each held in
// 16 vec4 registers (rows 4*ly..+3 and BM/2+4*ly..+3, columns 4*lx..+3 and BN/2+4*lx..+3).
// K is walked in steps of BK through workgroup tiles As[k][m] (a's tile stored transposed) and
// Bs[k][n], which the unrolled inner loop reads as vec4. While one step is multiplied,
// the next step's slots are loaded from global memory into registers.
//
// Bindings:
//   0  P    params (u32): [M, N, K, a_off, a_sb, a_sm, a_sk, b_off, b_sb, b_sk, b_sn,
//                          o_off, o_sb, o_sm, o_sn, batch0]   (strides as i32 bits)
//   1  OUT  out: STRIDED; stored 4 elements at a time (one 16-byte word of float32, 8 bytes of
//            float16, 32 of float64) when it is row-major, 4-aligned and N % 4 == 0
//   2  A    a: STRIDED, read 4 elements at a time along k (A_ALONG_K) or along m; as one word
//            (as OUT's) when that stride is 1 and the offset and the other strides are multiples of 4
//   3  B    b: STRIDED, likewise along k (B_ALONG_K) or along n
// Grid: x = ceil(N / BN), y = ceil(M / BM), z = batches (from batch0, <= 65535 per dispatch).
$COMMON

@group(0) @binding(0) var<storage, read> P: array<u32>;
$DECLS

$FUNCS

const BM = ${BM}u;
const BN = ${BN}u;
const BK = ${BK}u;
const WG = BM * BN / 64u;
const A_ALONG_K = $A_ALONG_K;
const B_ALONG_K = $B_ALONG_K;

var<workgroup> As: array<vec4<$T>, ${AS}>;  // [BK][BM / 4]
var<workgroup> Bs: array<vec4<$T>, ${BS}>;  // [BK][BN / 4]

fn si(k: u32) -> i32 { return bitcast<i32>(P[k]); }

// Elements e, e + s, e + 2s, e + 3s of a (b).
fn ld4_A(e: i32, s: i32) -> vec4<$T> { $LD4_A }
fn ld4_B(e: i32, s: i32) -> vec4<$T> { $LD4_B }

fn lanes(i: u32, n: u32) -> vec4<bool> { return vec4<u32>(i) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n); }

// Slot idx of a's tile at (m0, k0): 4 elements along k or m, zero outside the matrix.
// NOTE: select, not a multiply by a mask: the lanes past the edge may hold NaN or inf.
fn fetch_A(idx: u32, base: i32, m0: u32, k0: u32) -> vec4<$T> {
  var m = m0 + 4u * (idx & (BM / 4u - 1u));
  var k = k0 + idx / (BM / 4u);
  var s = si(5u);
  var ok = lanes(m, P[0]) & vec4<bool>(k < P[2]);
  if (A_ALONG_K) {
    m = m0 + idx / (BK / 4u);
    k = k0 + 4u * (idx & (BK / 4u - 1u));
    s = si(6u);
    ok = lanes(k, P[2]) & vec4<bool>(m < P[0]);
  }
  if (!any(ok)) { return vec4<$T>(0.0); }
  return select(vec4<$T>(0.0), ld4_A(base + i32(m) * si(5u) + i32(k) * si(6u), s), ok);
}

fn fetch_B(idx: u32, base: i32, n0: u32, k0: u32) -> vec4<$T> {
  var n = n0 + 4u * (idx & (BN / 4u - 1u));
  var k = k0 + idx / (BN / 4u);
  var s = si(10u);
  var ok = lanes(n, P[1]) & vec4<bool>(k < P[2]);
  if (B_ALONG_K) {
    n = n0 + idx / (BK / 4u);
    k = k0 + 4u * (idx & (BK / 4u - 1u));
    s = si(9u);
    ok = lanes(k, P[2]) & vec4<bool>(n < P[1]);
  }
  if (!any(ok)) { return vec4<$T>(0.0); }
  return select(vec4<$T>(0.0), ld4_B(base + i32(k) * si(9u) + i32(n) * si(10u), s), ok);
}

// Slot idx into the tile: along m (n) it is one vec4 of the tile; along k, 4 components.
// (Tile sizes are powers of two: & takes remainders, as `%` is kept out of generated WGSL.)
fn put_A(idx: u32, v: vec4<$T>) {
  if (!A_ALONG_K) {
    As[idx] = v;
    return;
  }
  let m = idx / (BK / 4u);
  let i = 4u * (idx & (BK / 4u - 1u)) * (BM / 4u) + m / 4u;
  let j = m & 3u;
  As[i][j] = v.x;
  As[i + BM / 4u][j] = v.y;
  As[i + BM / 2u][j] = v.z;
  As[i + 3u * BM / 4u][j] = v.w;
}

fn put_B(idx: u32, v: vec4<$T>) {
  if (!B_ALONG_K) {
    Bs[idx] = v;
    return;
  }
  let n = idx / (BK / 4u);
  let i = 4u * (idx & (BK / 4u - 1u)) * (BN / 4u) + n / 4u;
  let j = n & 3u;
  Bs[i][j] = v.x;
  Bs[i + BN / 4u][j] = v.y;
  Bs[i + BN / 2u][j] = v.z;
  Bs[i + 3u * BN / 4u][j] = v.w;
}

// Outputs (m, n..n+3) of batch base obase, those inside the matrix.
fn st4(obase: i32, m: u32, n: u32, v: vec4<$T>) {
  if (m >= P[0] || n >= P[1]) { return; }
  let e = obase + i32(m) * si(13u) + i32(n) * si(14u);
$ST4
}

@compute @workgroup_size(BN / 8u, BM / 8u)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {
  let K = P[2];
  let bat = i32(wid.z + P[15]);
  let m0 = wid.y * BM;
  let n0 = wid.x * BN;
  let abase = si(3u) + bat * si(4u);
  let bbase = si(7u) + bat * si(8u);
  let ar = lid.y;
  let bc = lid.x;
$ZERO
$FIRST
  for (var k0 = 0u; k0 < K; k0 = k0 + BK) {
$PUT
    workgroupBarrier();
    if (k0 + BK < K) {
$NEXT
    }
$FMA
    workgroupBarrier();
  }
  let obase = si(11u) + bat * si(12u);
$STORE
}
