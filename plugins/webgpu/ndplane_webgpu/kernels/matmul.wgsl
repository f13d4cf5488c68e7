// matmul.wgsl: out[b] = a[b] @ b[b] for a (B, M, K), b (B, K, N), out (B, M, N).
// A 64x64 output tile per workgroup of 16x16 threads (4x4 outputs each), K walked in
// steps of 16 through workgroup-memory tiles of a and b. Every dtype but the floating ones,
// which take matmul_tiled.wgsl.
//
// Bindings:
//   0  P    params (u32): [M, N, K, a_off, a_sb, a_sm, a_sk, b_off, b_sb, b_sk, b_sn,
//                          o_off, o_sb, o_sm, o_sn, batch0]   (strides as i32 bits)
//   1  OUT  out: STRIDED (the core passes it contiguous)
//   2  A    a: STRIDED (row- or column-major, batch stride may be 0)
//   3  B    b: STRIDED (row- or column-major, batch stride may be 0)
// Grid: x = ceil(N / 64), y = ceil(M / 64), z = batches (from batch0, <= 65535 per dispatch).
$COMMON

@group(0) @binding(0) var<storage, read> P: array<u32>;
$DECLS

$FUNCS

var<workgroup> As: array<$ACC, 1024>;  // [64 rows][16 k]
var<workgroup> Bs: array<$ACC, 1024>;  // [16 k][64 cols]

fn si(k: u32) -> i32 { return bitcast<i32>(P[k]); }

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let M = P[0];
  let N = P[1];
  let K = P[2];
  let bat = i32(wid.z + P[15]);
  let m0 = wid.y * 64u;
  let n0 = wid.x * 64u;
  let abase = si(3u) + bat * si(4u);
  let bbase = si(7u) + bat * si(8u);
  var acc: array<$ACC, 16>;
  for (var q = 0u; q < 16u; q = q + 1u) { acc[q] = $ZERO; }
  for (var k0 = 0u; k0 < K; k0 = k0 + 16u) {
    for (var q = 0u; q < 4u; q = q + 1u) {
      let idx = tid + q * 256u;
      let am = m0 + idx / 16u;
      let ak = k0 + u_mod(idx, 16u);
      var av: $ACC = $ZERO;
      if (am < M && ak < K) { av = $LOAD_A; }
      As[idx] = av;
      let bk = k0 + idx / 64u;
      let bn = n0 + u_mod(idx, 64u);
      var bv: $ACC = $ZERO;
      if (bk < K && bn < N) { bv = $LOAD_B; }
      Bs[idx] = bv;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < 16u; kk = kk + 1u) {
      var ar: array<$ACC, 4>;
      var br: array<$ACC, 4>;
      for (var q = 0u; q < 4u; q = q + 1u) {
        ar[q] = As[(lid.y + 16u * q) * 16u + kk];
        br[q] = Bs[kk * 64u + lid.x + 16u * q];
      }
      for (var i = 0u; i < 4u; i = i + 1u) {
        for (var j = 0u; j < 4u; j = j + 1u) {
          acc[i * 4u + j] = acc[i * 4u + j] + $PRODUCT;
        }
      }
    }
    workgroupBarrier();
  }
  let obase = si(11u) + bat * si(12u);
  for (var i = 0u; i < 4u; i = i + 1u) {
    let m = m0 + lid.y + 16u * i;
    for (var j = 0u; j < 4u; j = j + 1u) {
      let n = n0 + lid.x + 16u * j;
      if (m < M && n < N) {
        let v = acc[i * 4u + j];
        st_OUT(obase + i32(m) * si(13u) + i32(n) * si(14u), $RESULT);
      }
    }
  }
}
