// reduce.wgsl: out[m] = REDUCE_k x[m, k] for x (M, K).
//   main:        one workgroup per row (workgroup ids beyond 65535 spill into y), a parallel
//                tree reduction in workgroup memory; for long rows.
//   reduce_rows: one thread per row, a sequential fold; for short rows (many of them).
//
// Bindings:
//   0  P    params (u32): [M, K, x_offset, x_stride0 (i32), x_stride1 (i32), out_offset, out_stride]
//   1  OUT  (M,) STRIDED, dtype of the result (sum/prod accumulate in its compute type)
//   2  A    x: STRIDED in both axes
// Each thread folds elements t, t+256, ... of its row, then the 256 partials are
// combined pairwise. Partials carry an index (argmax/argmin, and "empty" = 0xffffffff
// for max/min, which have no identity); ties keep the lower index, so the result is
// the first occurrence, and NaN wins (max/min propagate NaN).
$COMMON

@group(0) @binding(0) var<storage, read> P: array<u32>;
$DECLS

$FUNCS

const EMPTY: u32 = 0xffffffffu;
var<workgroup> sv: array<$ACC, 256>;
var<workgroup> si: array<u32, 256>;

// Whether (v2, i2) should replace (v1, i1).
fn better(v1: $ACC, i1: u32, v2: $ACC, i2: u32) -> bool {
  if (i2 == EMPTY) { return false; }
  if (i1 == EMPTY) { return true; }
$BETTER
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {
  let row = wid.x + wid.y * nwg.x;
  let M = P[0];
  let K = P[1];
  let base = i32(P[2]) + i32(row) * bitcast<i32>(P[3]);
  let s1 = bitcast<i32>(P[4]);
  var acc: $ACC = $IDENTITY;
  var idx: u32 = $IDENTITY_INDEX;
  if (row < M) {
    for (var k = t; k < K; k = k + 256u) {
      let v: $ACC = $LOAD;
      $FOLD
    }
  }
  sv[t] = acc;
  si[t] = idx;
  for (var s = 128u; s > 0u; s = s >> 1u) {
    workgroupBarrier();
    if (t < s) {
      $MERGE
    }
  }
  if (t == 0u && row < M) {
    let rv = sv[0];
    let ri = si[0];
    st_OUT(i32(P[5]) + i32(row) * bitcast<i32>(P[6]), $RESULT);
  }
}

@compute @workgroup_size(256)
fn reduce_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let row = gid.x + gid.y * nwg.x * 256u;
  if (row >= P[0]) { return; }
  let K = P[1];
  let base = i32(P[2]) + i32(row) * bitcast<i32>(P[3]);
  let s1 = bitcast<i32>(P[4]);
  var acc: $ACC = $IDENTITY;
  var idx: u32 = $IDENTITY_INDEX;
  for (var k = 0u; k < K; k = k + 1u) {
    let v: $ACC = $LOAD;
    $FOLD
  }
  let rv = acc;
  let ri = idx;
  st_OUT(i32(P[5]) + i32(row) * bitcast<i32>(P[6]), $RESULT);
}
