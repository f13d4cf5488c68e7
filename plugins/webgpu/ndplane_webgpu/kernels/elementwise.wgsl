// elementwise.wgsl: out[i] = EXPR(a[i], b[i], c[i]) over an n-d index space.
// Used by unary, binary, where, cast, copy and fill.
//
// Bindings:
//   0  P    params (u32): [n, ndim, scalar0, scalar0_hi, scalar1, scalar1_hi, shape[ndim],
//           then per buffer operand r (OUT first): offset_r, strides_r[ndim] (i32 bits)]
//   1  OUT  the output: STRIDED (any view: copy and fill write into the user's views)
//   2+ A, B, C  the inputs: each STRIDED (0 and negative strides included),
//           or a Python scalar read from P[2] / P[4] (64-bit ones: and P[3] / P[5]; no binding)
// Thread i handles logical element i (row-major); the flat index is split into
// coordinates with the shape and dotted with each operand's strides (CONTIG
// skips that when every operand is contiguous).
$COMMON

@group(0) @binding(0) var<storage, read> P: array<u32>;
$DECLS

$FUNCS

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 256u;
  if (i >= P[0]) { return; }
  let nd = P[1];
$INDEX
  st_OUT(e0, $EXPR);
}
