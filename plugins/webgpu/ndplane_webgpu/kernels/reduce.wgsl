// reduce.wgsl: out[m] = REDUCE_k x[m, k] for x (M, K).
//   main:        G workgroups per row (ids beyond 65535 spill into y), each folding a chunk of
//                C elements and combining its 256 partials in a workgroup-memory tree. With
//                G == 1 it writes out[m]; with G > 1 it writes the partial (value bits, index)
//                of its chunk to S / SI, and reduce_final combines the G partials of each row.
//   reduce_rows: one thread per row (and chunk of C elements when G > 1), a sequential
//                fold; for many short rows and for rows adjacent in memory (column sums),
//                where neighbouring threads then read neighbouring words. With G > 1,
//                reduce_rows_final folds each row's G partials, one thread per row.
//
// Bindings:
//   0  P    params (u32): [M, K, x_offset, x_stride0, x_stride1, out_offset, out_stride, G, C]
//   1  OUT  (M,) STRIDED, dtype of the result (sum/prod accumulate in its compute type)
//   2  A    x: STRIDED in both axes
//   3  S    (M * G * 4) u32 scratch: partial values (bits of $ACC, four words each) (G > 1)
//   4  SI   (M * G) u32 scratch: partial indices                    (only when G > 1)
// Each thread folds elements t, t+256, ... of its chunk, then the 256 partials are
// combined pairwise. Partials carry an index (argmax/argmin, and "empty" = 0xffffffff
// for max/min, which have no identity); ties keep the lower index, so the result is
// the first occurrence, and NaN wins (max/min propagate NaN).
$COMMON

@group(0) @binding(0) var<storage, read> P: array<u32>;
$DECLS
@group(0) @binding(3) var<storage, read_write> S: array<u32>;
@group(0) @binding(4) var<storage, read_write> SI: array<u32>;

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

fn to_bits(v: $ACC) -> vec4<u32> { return $TO_BITS; }
fn from_bits(w: vec4<u32>) -> $ACC { return $FROM_BITS; }
fn put_partial(i: u32, v: $ACC) { let b = to_bits(v); S[4u * i] = b.x; S[4u * i + 1u] = b.y; S[4u * i + 2u] = b.z; S[4u * i + 3u] = b.w; }
fn partial(i: u32) -> $ACC { return from_bits(vec4<u32>(S[4u * i], S[4u * i + 1u], S[4u * i + 2u], S[4u * i + 3u])); }

// Combines the 256 (sv, si) partials into sv[0], si[0]; call from uniform control flow.
fn tree(t: u32) {
  for (var s = 128u; s > 0u; s = s >> 1u) {
    workgroupBarrier();
    if (t < s) {
      $MERGE
    }
  }
  workgroupBarrier();
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {
  let w = wid.x + wid.y * nwg.x;
  let G = P[7];
  let row = w / G;
  let k0 = u_mod(w, G) * P[8];
  let k1 = min(P[1], k0 + P[8]);
  let base = i32(P[2]) + i32(row) * bitcast<i32>(P[3]);
  let s1 = bitcast<i32>(P[4]);
  var acc: $ACC = $IDENTITY;
  var idx: u32 = $IDENTITY_INDEX;
  if (row < P[0]) {
    for (var k = k0 + t; k < k1; k = k + 256u) {
      let v: $ACC = $LOAD;
      $FOLD
    }
  }
  sv[t] = acc;
  si[t] = idx;
  tree(t);
  if (t == 0u && row < P[0]) {
    if (G == 1u) {
      let rv = sv[0];
      let ri = si[0];
      st_OUT(i32(P[5]) + i32(row) * bitcast<i32>(P[6]), $RESULT);
    } else {
      put_partial(w, sv[0]);
      SI[w] = si[0];
    }
  }
}

@compute @workgroup_size(256)
fn reduce_final(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) t: u32) {
  let row = wid.x + wid.y * nwg.x;
  let G = P[7];
  var acc: $ACC = $IDENTITY;
  var idx: u32 = $IDENTITY_INDEX;
  if (row < P[0]) {
    for (var g = t; g < G; g = g + 256u) {
      let v = partial(row * G + g);
      let k = SI[row * G + g];
      $FOLD
    }
  }
  sv[t] = acc;
  si[t] = idx;
  tree(t);
  if (t == 0u && row < P[0]) {
    let rv = sv[0];
    let ri = si[0];
    st_OUT(i32(P[5]) + i32(row) * bitcast<i32>(P[6]), $RESULT);
  }
}

@compute @workgroup_size(256)
fn reduce_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  // Thread (g, row) = (tid / M, tid % M): neighbouring threads take neighbouring rows, so
  // the loads coalesce where rows are adjacent in memory (a column reduction).
  let tid = gid.x + gid.y * nwg.x * 256u;
  let M = P[0];
  let G = P[7];
  if (tid >= M * G) { return; }
  let row = u_mod(tid, M);
  let g = tid / M;
  let k0 = g * P[8];
  let k1 = min(P[1], k0 + P[8]);
  let base = i32(P[2]) + i32(row) * bitcast<i32>(P[3]);
  let s1 = bitcast<i32>(P[4]);
  var acc: $ACC = $IDENTITY;
  var idx: u32 = $IDENTITY_INDEX;
  for (var k = k0; k < k1; k = k + 1u) {
    let v: $ACC = $LOAD;
    $FOLD
  }
  if (G > 1u) {
    put_partial(row * G + g, acc);
    SI[row * G + g] = idx;
    return;
  }
  let rv = acc;
  let ri = idx;
  st_OUT(i32(P[5]) + i32(row) * bitcast<i32>(P[6]), $RESULT);
}

@compute @workgroup_size(256)
fn reduce_rows_final(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let row = gid.x + gid.y * nwg.x * 256u;
  if (row >= P[0]) { return; }
  let G = P[7];
  var acc: $ACC = $IDENTITY;
  var idx: u32 = $IDENTITY_INDEX;
  for (var g = 0u; g < G; g = g + 1u) {
    let v = partial(row * G + g);
    let k = SI[row * G + g];
    $FOLD
  }
  let rv = acc;
  let ri = idx;
  st_OUT(i32(P[5]) + i32(row) * bitcast<i32>(P[6]), $RESULT);
}
