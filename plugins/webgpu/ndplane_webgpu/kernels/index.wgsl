// index.wgsl: gather and scatter along the last axis (advanced indexing and its gradient).
//   TAKE:    out[m, k] = x[m, idx[k]]
//   SCATTER: out[m, idx[k]] += values[m, k]   (indices may repeat: an atomic read-modify-write
//            per element, a compare-and-swap loop on the 32-bit word that holds it)
//
// Bindings:
//   0  P    params (u32): [M * K, K, x_off, x_s0, x_s1, i_off, i_s0, o_off, o_s0, o_s1]
//           (TAKE: x = the source, o = out; SCATTER: x = values, o = out)
//   1  OUT  out (M, K) for TAKE / (M, N) for SCATTER: STRIDED (SCATTER writes the user's view)
//   2  X    x (M, N) / values (M, K): STRIDED
//   3  I    idx (K,): STRIDED integer, already checked to lie in [0, N) by the core
//   4  Q    (SCATTER of 64-bit elements, which have no atomic add) the stable argsort of idx:
//           thread (m, k) adds the run of equal indices starting at sorted position k, if one does
$COMMON

@group(0) @binding(0) var<storage, read> P: array<u32>;
$DECLS

$FUNCS

fn si(k: u32) -> i32 { return bitcast<i32>(P[k]); }

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 256u;
  if (i >= P[0]) { return; }
  let K = P[1];
  let m = i32(i / K);
  let k = i32(u_mod(i, K));
  let j = $INDEX;
$BODY
}
