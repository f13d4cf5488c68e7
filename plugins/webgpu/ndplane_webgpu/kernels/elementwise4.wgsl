// elementwise4.wgsl: the contiguous case of elementwise.wgsl when every buffer operand has a
// 32- or 64-bit dtype: four elements per thread through 16-byte loads and stores (two of them
// for a 64-bit operand, whose elements are then vec2<u32> halves; R_T the results' type).
//
// Bindings as in elementwise.wgsl, each buffer an array<vec4<u32>>; P as there with ndim 1:
//   [n, 1, scalar0, scalar0_hi, scalar1, scalar1_hi, n, then per buffer operand r (OUT first): offset_r, 1],
// every offset a multiple of 4 elements. Thread q handles elements 4q .. 4q+3. A partial
// last vector is stored lane by lane: the words past the view may belong to another view of
// the same buffer.
$COMMON

@group(0) @binding(0) var<storage, read> P: array<u32>;
$DECLS

$FUNCS

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let q = gid.x + gid.y * nwg.x * 256u;
  let n = P[0];
  if (4u * q >= n) { return; }
$LOADS
  var r: $R_T;
  for (var l = 0u; l < 4u; l = l + 1u) {
    r[l] = $EXPR;
  }
$STORE
}
