// rows.wgsl: the fused row ops of ndplane.composite along the last axis of x (M, K), one
// workgroup of 256 threads per row: a max pass, a sum-of-exp pass, then the result (MODE):
//   softmax      out[m, k] = exp(x - max) / sum
//   log_softmax  out[m, k] = (x - max) - log(sum)
//   logsumexp    out[m]    = log(sum) + max, with max taken as 0 where it is not finite
// exactly the composite's algorithm, so nan and inf rows come out the same (NaN-propagating
// max, -inf - -inf = nan). float16 is computed in float32 and rounded once; float64 in $$ACC = f64
// (the f_* helpers renamed to their float64 twins, exp and log from f64math.wgsl).
//
// A thread takes V adjacent elements at a time (ld_X, st_X, the lanes_* folds): V = 4 reads
// (and, for softmax and log_softmax, writes) float32 as 16-byte words, where K and both
// offsets are multiples of 4; else V = 1.
//
// Bindings:
//   0  P    params (u32): [M, K, x_offset, out_offset]
//   1  OUT  (M, K) or (M,), C-contiguous
//   2  A    x (M, K), C-contiguous
// Grid: one workgroup per row (ids beyond 65535 spill into y).
$COMMON

@group(0) @binding(0) var<storage, read> P: array<u32>;
$DECLS

const V: u32 = $V;

$FUNCS

var<workgroup> sv: array<$ACC, 256>;

fn tree_max(t: u32, v: $ACC) -> $ACC {
  sv[t] = v;
  for (var s = 128u; s > 0u; s = s >> 1u) {
    workgroupBarrier();
    if (t < s) { sv[t] = f_maximum(sv[t], sv[t + s]); }
  }
  workgroupBarrier();
  let r = sv[0];
  workgroupBarrier();
  return r;
}

fn tree_sum(t: u32, v: $ACC) -> $ACC {
  sv[t] = v;
  for (var s = 128u; s > 0u; s = s >> 1u) {
    workgroupBarrier();
    if (t < s) { sv[t] = sv[t] + sv[t + s]; }
  }
  workgroupBarrier();
  let r = sv[0];
  workgroupBarrier();
  return r;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {
  let row = wid.x + wid.y * nwg.x;
  let live = row < P[0];  // NOTE: no early return: the barriers below need every thread
  let K = select(0u, P[1], live);
  let base = P[2] + row * K;
  var m = f_neg(f_inf());
  for (var k = V * t; k < K; k = k + V * 256u) { m = f_maximum(m, lanes_max(ld_X(base + k))); }
  m = tree_max(t, m);
$SHIFT
  var s: $ACC = 0.0;
  for (var k = V * t; k < K; k = k + V * 256u) { s = s + lanes_sum_exp(ld_X(base + k), m); }
  s = tree_sum(t, s);
$RESULT
}
