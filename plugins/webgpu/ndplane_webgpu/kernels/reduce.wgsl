// reduce.wgsl: out[m] = REDUCE_k x[m, k] for x (M, K).
//   main:        G workgroups per row (ids beyond 65535 spill into y), each folding a chunk of
//                C elements and combining its 256 partials in a workgroup-memory tree. With
//                G == 1 it writes out[m]; with G > 1 it writes the partial (value bits, index)
//                of its chunk to S / SI, and reduce_final combines the G partials of each row.
//                With P[9] = 1 it reads 16-byte words of A4 (a 32-bit dtype, x_stride1 = 1, each
//                row and chunk start on the 16-byte grid).
//   reduce_rows: one thread per row (and chunk of C elements when G > 1), a sequential
//                fold; for many short rows and for rows adjacent in memory (column sums),
//                where neighbouring threads then read neighbouring words. With G > 1,
//                reduce_rows_final folds each row's G partials, one thread per row.
//   reduce_cols4: reduce_rows for rows adjacent in memory (x_stride0 = +-1) of a 32-bit dtype
//                whose every row start x_stride1 apart keeps the 16-byte grid: a thread per
//                vec4 word of a row (and chunk), folding four rows at once from 16-byte loads.
//                Its rows are the elements lo .. lo + M - 1 of each column (lo = x_offset, or
//                x_offset - (M - 1) when x_stride0 = -1, then row m is element M - 1 - m);
//                word q holds elements 4q - SHIFT .. 4q + 3 - SHIFT from lo, those outside
//                0 .. M - 1 are read (they lie in the buffer) but never written.
//
// Bindings:
//   0  P    params (u32): [M, K, x_offset, x_stride0, x_stride1, out_offset, out_stride, G, C,
//           (main) words?, or (reduce_cols4) WORD0 = (lo - SHIFT) / 4, x_stride1 / 4,
//           SHIFT = lo % 4, flip (x_stride0 = -1), Q = words a row: ceil((SHIFT + M) / 4)]
//   1  OUT  (M,) STRIDED, dtype of the result (sum/prod accumulate in its compute type)
//   2  A    x: STRIDED in both axes
//   3  S    (M * G) vec4<u32> scratch: partial values (bits of $ACC)  (only when G > 1)
//   4  SI   (M * G) u32 scratch: partial indices                    (only when G > 1)
//           reduce_rows* keep row m's partial of chunk g at g * M + m (neighbouring threads,
//           neighbouring partials), main / reduce_final at m * G + g.
//   5  A4   x as vec4<u32> words (reduce_cols4, instead of A; main: beside A, read when P[9] = 1)
// Each thread folds elements t, t+256, ... of its chunk, then the 256 partials are
// combined pairwise. Partials carry an index (argmax/argmin, and "empty" = 0xffffffff
// for max/min, which have no identity); ties keep the lower index, so the result is
// the first occurrence, and NaN wins (max/min propagate NaN).
$COMMON

@group(0) @binding(0) var<storage, read> P: array<u32>;
$DECLS
@group(0) @binding(3) var<storage, read_write> S: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> SI: array<u32>;
@group(0) @binding(5) var<storage, read> A4: array<vec4<u32>>;

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
fn put_partial(i: u32, v: $ACC) { S[i] = to_bits(v); }
fn partial(i: u32) -> $ACC { return from_bits(S[i]); }

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
  var f = Fold($IDENTITY, $IDENTITY_INDEX);
  if (row < P[0] && P[9] != 0u) {
    // Elements e .. e + 3 from one 16-byte word: thread t takes words t, t + 256, ... of the chunk.
    for (var e = k0 + 4u * t; e < k1; e = e + 1024u) {
      let x4 = A4[(u32(base) + e) / 4u];
      f = fold(f, lane(x4.x), e);
      if (e + 1u < k1) { f = fold(f, lane(x4.y), e + 1u); }
      if (e + 2u < k1) { f = fold(f, lane(x4.z), e + 2u); }
      if (e + 3u < k1) { f = fold(f, lane(x4.w), e + 3u); }
    }
  } else if (row < P[0]) {
    for (var k = k0 + t; k < k1; k = k + 256u) {
      let v: $ACC = $LOAD;
      f = fold(f, v, k);
    }
  }
  sv[t] = f.acc;
  si[t] = f.idx;
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
  finish_row(row, g, acc, idx);
}

// Row `row`'s fold over chunk g: its result (G == 1) or its partial.
fn finish_row(row: u32, g: u32, acc: $ACC, idx: u32) {
  if (P[7] > 1u) {
    put_partial(g * P[0] + row, acc);
    SI[g * P[0] + row] = idx;
    return;
  }
  let rv = acc;
  let ri = idx;
  st_OUT(i32(P[5]) + i32(row) * bitcast<i32>(P[6]), $RESULT);
}

// (acc, idx) after folding element k, of value v, into them.
struct Fold { acc: $ACC, idx: u32 }
fn fold(a: Fold, v: $ACC, k: u32) -> Fold {
  var acc = a.acc;
  var idx = a.idx;
  $FOLD
  return Fold(acc, idx);
}

// An element of A4's words as $ACC (a stand-in for dtypes reduce_cols4 does not take).
fn lane(w: u32) -> $ACC { return $LANE; }

@compute @workgroup_size(256)
fn reduce_cols4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  // Thread (g, q) = (tid / Q, tid % Q): neighbouring threads read neighbouring words.
  let tid = gid.x + gid.y * nwg.x * 256u;
  let Q = P[13];
  if (tid >= Q * P[7]) { return; }
  let q = u_mod(tid, Q);
  let g = tid / Q;
  let k0 = g * P[8];
  let k1 = min(P[1], k0 + P[8]);
  let w0 = i32(P[9]) + i32(q);
  let ws = bitcast<i32>(P[10]);
  // NOTE: four named partials, not an array: a dynamically indexed array may live in memory.
  var f0 = Fold($IDENTITY, $IDENTITY_INDEX);
  var f1 = f0;
  var f2 = f0;
  var f3 = f0;
  for (var k = k0; k < k1; k = k + 1u) {
    let w = A4[w0 + i32(k) * ws];
    f0 = fold(f0, lane(w.x), k);
    f1 = fold(f1, lane(w.y), k);
    f2 = fold(f2, lane(w.z), k);
    f3 = fold(f3, lane(w.w), k);
  }
  finish_lane(q, 0u, g, f0);
  finish_lane(q, 1u, g, f1);
  finish_lane(q, 2u, g, f2);
  finish_lane(q, 3u, g, f3);
}

// reduce_cols4's lane l of word q, when it holds a row (j: its element from lo).
fn finish_lane(q: u32, l: u32, g: u32, f: Fold) {
  let j = i32(4u * q + l) - i32(P[11]);
  if (j >= 0 && j < i32(P[0])) {
    finish_row(select(u32(j), P[0] - 1u - u32(j), P[12] != 0u), g, f.acc, f.idx);
  }
}

@compute @workgroup_size(256)
fn reduce_rows_final(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let row = gid.x + gid.y * nwg.x * 256u;
  if (row >= P[0]) { return; }
  let G = P[7];
  var acc: $ACC = $IDENTITY;
  var idx: u32 = $IDENTITY_INDEX;
  for (var g = 0u; g < G; g = g + 1u) {
    let v = partial(g * P[0] + row);
    let k = SI[g * P[0] + row];
    $FOLD
  }
  let rv = acc;
  let ri = idx;
  st_OUT(i32(P[5]) + i32(row) * bitcast<i32>(P[6]), $RESULT);
}
