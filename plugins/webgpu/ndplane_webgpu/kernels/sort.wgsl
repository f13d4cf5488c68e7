// sort.wgsl: sort each row of x (M, K) with a bitonic network over (key, index) pairs.
// Keys are order-preserving $$KEY_T (u32, or u64 for 64-bit dtypes) images of the values (NaN largest, -0.0 == 0.0; inverted
// for descending), ties are broken by the original index, so the network is stable and
// NaNs land last (first when descending), exactly like the reference's stable argsort.
// Rows are padded to a power of two P with (all ones, 0xffffffff), which sorts last. KV holds a
// pair in KW = 2 words (3 for a u64 key: low, high, index); kv_key / kv_idx / kv_put read and write them.
//
// Entry points (one pipeline each), all 1-D over threads, ids beyond 65535 groups spill into y:
//   sort_keys:   pair g = key(x[m, i]), i               for g = m * P + i          (reads X)
//   sort_local:  one workgroup per block of L = min(P, LMAX) pairs in workgroup memory: the full
//           network up to size L (mode 0) or the tail j = L/2 .. 1 of stage k = P[6] (mode 1)
//   sort_global: one compare-exchange step (k = P[6], j = P[7]) in global memory, for j >= L
//   sort_gather: V[m, i] = x[m, idx], I[m, i] = idx                                (reads X)
// Bindings:
//   0  P    params (u32): [M, P, K, x_off, x_s0, x_s1, k, j, v_off, v_s0, v_s1,
//                          i_off, i_s0, i_s1, L, descending, mode]
//   1  KV   (M * P * KW) u32 scratch
//   2  X    x (M, K): STRIDED
//   3  V    sorted values (M, K): STRIDED (gather only, when requested)
//   4  I    permutation (M, K): STRIDED integer (gather only, when requested)
$COMMON

@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> KV: array<u32>;
$DECLS

$FUNCS

fn si(k: u32) -> i32 { return bitcast<i32>(P[k]); }

fn tid(gid: vec3<u32>, nwg: vec3<u32>) -> u32 { return gid.x + gid.y * nwg.x * 256u; }

fn kv_key(g: u32) -> $KEY_T { return $KV_KEY; }
fn kv_idx(g: u32) -> u32 { return KV[$KW * g + $KW - 1u]; }
fn kv_put(g: u32, k: $KEY_T, i: u32) {
  $KV_PUT
  KV[$KW * g + $KW - 1u] = i;
}

// Whether pair (ka, ia) sorts after (kb, ib).
fn after(ka: $KEY_T, ia: u32, kb: $KEY_T, ib: u32) -> bool { return ka > kb || (ka == kb && ia > ib); }

@compute @workgroup_size(256)
fn sort_keys(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = tid(gid, nwg);
  let Pn = P[1];
  if (g >= P[0] * Pn) { return; }
  let m = g / Pn;
  let i = u_mod(g, Pn);
  var key: $KEY_T = $KEY_MAX;
  var idx = 0xffffffffu;
  if (i < P[2]) {
    key = $KEY;
    if (P[15] == 1u) { key = ~key; }
    idx = i;
  }
  kv_put(g, key, idx);
}

var<workgroup> sk: array<$KEY_T, $LMAX>;
var<workgroup> sx: array<u32, $LMAX>;

@compute @workgroup_size(256)
fn sort_local(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) t: u32) {
  let L = P[14];
  let blk = wid.x + wid.y * nwg.x;
  if (blk >= P[0] * P[1] / L) { return; }
  let base = blk * L;
  for (var q = t; q < L; q = q + 256u) {
    sk[q] = kv_key(base + q);
    sx[q] = kv_idx(base + q);
  }
  var k = 2u;
  var kend = L;
  if (P[16] == 1u) { k = P[6]; kend = P[6]; }
  for (; k <= kend; k = k << 1u) {
    var j = k >> 1u;
    if (P[16] == 1u) { j = L >> 1u; }
    for (; j > 0u; j = j >> 1u) {
      workgroupBarrier();
      for (var q = t; q < L / 2u; q = q + 256u) {
        let a = 2u * j * (q / j) + u_mod(q, j);
        let b = a + j;
        let up = (u_mod(base + a, P[1]) & k) == 0u;
        if (after(sk[a], sx[a], sk[b], sx[b]) == up) {
          let tk = sk[a];
          let tx = sx[a];
          sk[a] = sk[b];
          sx[a] = sx[b];
          sk[b] = tk;
          sx[b] = tx;
        }
      }
    }
  }
  workgroupBarrier();
  for (var q = t; q < L; q = q + 256u) {
    kv_put(base + q, sk[q], sx[q]);
  }
}

@compute @workgroup_size(256)
fn sort_global(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let q = tid(gid, nwg);
  if (q >= P[0] * P[1] / 2u) { return; }
  let k = P[6];
  let j = P[7];
  let a = 2u * j * (q / j) + u_mod(q, j);
  let b = a + j;
  let up = (u_mod(a, P[1]) & k) == 0u;
  let ka = kv_key(a);
  let xa = kv_idx(a);
  let kb = kv_key(b);
  let xb = kv_idx(b);
  if (after(ka, xa, kb, xb) == up) {
    kv_put(a, kb, xb);
    kv_put(b, ka, xa);
  }
}

@compute @workgroup_size(256)
fn sort_gather(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = tid(gid, nwg);
  let K = P[2];
  if (g >= P[0] * K) { return; }
  let m = g / K;
  let i = u_mod(g, K);
  let idx = kv_idx(m * P[1] + i);
$GATHER
}
