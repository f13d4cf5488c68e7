// radix_sort.wgsl: stable LSD radix sort of each row of x (M, K), 8-bit digits, for long rows.
// Keys are order-preserving images of the values, only as wide as the dtype needs ($$KEY: 8 bits
// for bool and 8-bit integers, 16 for 16-bit dtypes, 32, or 64 for 64-bit dtypes as a u64 in two
// words of KI / KO; NaN largest, -0.0 == 0.0), XORed with P[13] (all ones of that width, both
// words of a 64-bit key) for descending: a stable sort of the complement keeps
// equal keys in input order, as the reference's reversed stable argsort does.
// Each row is cut into T = ceil(K / TILE) tiles of TILE = 256 * ITEMS keys. A pass over the
// digit (key >> P[3]) & 255 is three steps:
//   radix_hist:    a workgroup per tile counts its digits in workgroup atomics, into
//                  C[(m * 256 + d) * T + t] (row-major over [row][digit][tile])
//   radix_scan:    exclusive scan of C in blocks of 1024 (level l at C[P[15]..], block totals to
//                  level l + 1 at C[P[16]..] when P[17] == 1); the levels are not added back:
//                  the offset of count i is the sum over levels l of C[off_l + (i >> 10l)].
//                  Every row holds K keys, so that is the first output slot of the (row,
//                  digit, tile) in the flattened (M * K) arrays.
//   radix_scatter: a workgroup per tile ranks its keys by digit (two stable 4-bit counting
//                  steps in workgroup memory, rank_step), then writes sorted slot p to
//                  offset[digit] + p - (first slot of that digit in the sorted tile)
// The first pass (FIRST) reads the keys from X and the positions are the row positions; later
// passes read KI, II. The last pass (LAST) writes V[m, i] = x[m, idx] and I[m, i] = idx instead
// of KO, IO. A module per (FIRST, LAST): a branch on a parameter would cost lavapipe both sides.
// Workgroups are 256 threads; ids beyond 65535 groups spill into y.
// Bindings:
//   0  P    params (u32): [M, K, T, shift, x_off, x_s0, x_s1, v_off, v_s0, v_s1, i_off, i_s0,
//                          i_s1, key_xor, scan_n, scan_off, scan_off_next, scan_has_next,
//                          levels, off_0, off_1, off_2, off_3]
//   1  C    digit counts and their scan levels (u32 scratch)
//   2  X    x (M, K): STRIDED
//   3  V    sorted values (M, K): STRIDED (last pass, when requested)
//   4  I    permutation (M, K): STRIDED integer (last pass, when requested)
//   5  KI   keys in (M * K, two words a key for 64-bit keys), 6  II  row positions in (M * K)
//   7  KO   keys out (M * K, likewise), 8  IO  row positions out (M * K)
$COMMON

@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> C: array<u32>;
@group(0) @binding(5) var<storage, read> KI: array<u32>;
@group(0) @binding(6) var<storage, read> II: array<u32>;
@group(0) @binding(7) var<storage, read_write> KO: array<u32>;
@group(0) @binding(8) var<storage, read_write> IO: array<u32>;
$DECLS

$FUNCS

const ITEMS = ${ITEMS}u;
const TILE = ${TILE}u;
const FIRST = ${FIRST};  // the first pass: keys from X
const LAST = ${LAST};  // the last pass: writes V and I

fn si(k: u32) -> i32 { return bitcast<i32>(P[k]); }

// The order-preserving 16-bit key of a float16 value (given as the f32 it converts to exactly).
fn h_sortkey(x: f32) -> u32 {
  if (f_isnan(x)) { return 0xffffu; }
  var b = f32_to_f16(x);
  if ((b & 0x7fffu) == 0u) { b = 0u; }
  if ((b & 0x8000u) != 0u) { return ~b & 0xffffu; }
  return b | 0x8000u;
}

// The tile a workgroup owns: (row, tile in row, first flat element, keys in it, valid).
struct Tile { m: u32, t: u32, base: u32, n: u32, valid: bool }

fn tile_of(wid: vec3<u32>, nwg: vec3<u32>) -> Tile {
  let T = P[2];
  let id = wid.x + wid.y * nwg.x;
  let m = id / T;
  let t = u_mod(id, T);
  let valid = m < P[0];
  let first = t * TILE;
  var n = 0u;
  if (valid) { n = min(TILE, P[1] - first); }
  return Tile(m, t, m * P[1] + first, n, valid);
}

fn digit(key: $KEY_T) -> u32 { return u32(key >> P[3]) & 0xffu; }

fn ld_key(i: u32) -> $KEY_T { return $LD_KEY; }
fn st_key(i: u32, k: $KEY_T) { $ST_KEY }

// Key and row position of the tile's q-th element: from x in the first pass.
fn key_at(tl: Tile, q: u32) -> $KEY_T {
  if (FIRST) {
    let m = tl.m;
    let i = tl.t * TILE + q;
    return ($KEY) ^ $KEY_XOR;
  }
  return ld_key(tl.base + q);
}

fn index_at(tl: Tile, q: u32) -> u32 {
  if (FIRST) { return tl.t * TILE + q; }
  return II[tl.base + q];
}

// NOTE: 8 copies of the 256 counters, thread t counting into copy t & 7: keys of one digit
// (a common top byte) would otherwise serialise a whole warp's atomics on one word.
var<workgroup> hist: array<atomic<u32>, 2048>;

@compute @workgroup_size(256)
fn radix_hist(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) t: u32) {
  let tl = tile_of(wid, nwg);
  for (var c = 0u; c < 8u; c = c + 1u) { atomicStore(&hist[c * 256u + t], 0u); }
  workgroupBarrier();
  let copy = (t & 7u) * 256u;
  for (var q = t; q < tl.n; q = q + 256u) {
    atomicAdd(&hist[copy + digit(key_at(tl, q))], 1u);
  }
  workgroupBarrier();
  var sum = 0u;
  for (var c = 0u; c < 8u; c = c + 1u) { sum = sum + atomicLoad(&hist[c * 256u + t]); }
  if (tl.valid) { C[(tl.m * 256u + t) * P[2] + tl.t] = sum; }
}

var<workgroup> sa: array<u32, 256>;
var<workgroup> sb: array<u32, 256>;

// Inclusive scan of v over the workgroup (Hillis-Steele, ping-pong: one barrier a step);
// the workgroup total is left in sa[255]. Call in uniform control flow.
fn wg_scan(t: u32, v: u32) -> u32 {
  var x = v;
  sa[t] = x;
  for (var s = 1u; s < 256u; s = s << 2u) {
    workgroupBarrier();
    if (t >= s) { x = x + sa[t - s]; }
    sb[t] = x;
    workgroupBarrier();
    if (t >= 2u * s) { x = x + sb[t - 2u * s]; }
    sa[t] = x;
  }
  workgroupBarrier();
  return x;
}

@compute @workgroup_size(256)
fn radix_scan(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) t: u32) {
  let b = wid.x + wid.y * nwg.x;
  let n = P[14];
  let first = b * 1024u + 4u * t;
  var v = vec4<u32>(0u);
  for (var j = 0u; j < 4u; j = j + 1u) {
    if (first + j < n) { v[j] = C[P[15] + first + j]; }
  }
  let sum = v.x + v.y + v.z + v.w;
  let incl = wg_scan(t, sum);
  var run = incl - sum;
  for (var j = 0u; j < 4u; j = j + 1u) {
    if (first + j < n) { C[P[15] + first + j] = run; }
    run = run + v[j];
  }
  if (t == 255u && P[17] == 1u && b * 1024u < n) { C[P[16] + b] = incl; }
}

// Workgroup slot of tile position q, padded so a thread's ITEMS consecutive slots spread over banks.
fn slot(q: u32) -> u32 { return q + (q >> 5u); }

// Shared by the rank counters (slots of words [0, 2048)) and the tile exchange (slots of [0, TILE)).
var<workgroup> sm: array<u32, ${SMEM}>;
var<workgroup> sstart: array<u32, 256>;
var<workgroup> soff: array<u32, 256>;

// The first output slot of (row, digit, tile): the sum of its scan levels.
fn global_offset(i: u32) -> u32 {
  var o = 0u;
  for (var l = 0u; l < P[18]; l = l + 1u) { o = o + C[P[19u + l] + (i >> (10u * l))]; }
  return o;
}

// Counter word of 4-bit bucket b in thread t's column: buckets 0-7 in the low halves of rows
// 0-7, 8-15 in the high halves, so a scan of the words in order counts (bucket, thread) order.
fn counter(b: u32, t: u32) -> u32 { return slot((b & 7u) * 256u + t); }

// Stable ranks of the thread's keys in the tile by the 4-bit bucket (pk >> bit) & 15, then the
// keys moved to them: each thread counts its ITEMS keys (consecutive in the tile) in its own
// column of 16-bit counters (TILE < 65536), then one scan of the 2048 words in order turns each
// counter into the tile slot of the first key of its (bucket, thread). No atomics: the order
// among equal buckets is the tile order, so the step is stable and deterministic.
fn rank_step(t: u32, bit: u32, pk: ptr<function, array<u32, ITEMS>>) {
  workgroupBarrier();
  for (var l = 0u; l < 8u; l = l + 1u) { sm[counter(l, t)] = 0u; }
  var rank: array<u32, ITEMS>;
  for (var j = 0u; j < ITEMS; j = j + 1u) {
    let b = ((*pk)[j] >> bit) & 15u;
    let sh = 16u * (b >> 3u);
    let c = sm[counter(b, t)];
    rank[j] = (c >> sh) & 0xffffu;
    sm[counter(b, t)] = c + (1u << sh);
  }
  workgroupBarrier();
  var w: array<u32, 8>;
  var sum = 0u;
  for (var i = 0u; i < 8u; i = i + 1u) {
    w[i] = sm[slot(8u * t + i)];
    sum = sum + w[i];
  }
  let incl = wg_scan(t, sum);
  // NOTE: the high halves (buckets 8-15) come after every low half: add the low total to them.
  var run = incl - sum + ((sa[255] & 0xffffu) << 16u);
  for (var i = 0u; i < 8u; i = i + 1u) {
    sm[slot(8u * t + i)] = run;
    run = run + w[i];
  }
  workgroupBarrier();
  for (var j = 0u; j < ITEMS; j = j + 1u) {
    let b = ((*pk)[j] >> bit) & 15u;
    rank[j] = rank[j] + ((sm[counter(b, t)] >> (16u * (b >> 3u))) & 0xffffu);
  }
  workgroupBarrier();
  for (var j = 0u; j < ITEMS; j = j + 1u) { sm[slot(rank[j])] = (*pk)[j]; }
  workgroupBarrier();
  for (var j = 0u; j < ITEMS; j = j + 1u) { (*pk)[j] = sm[slot(t * ITEMS + j)]; }
}

@compute @workgroup_size(256)
fn radix_scatter(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) t: u32) {
  let tl = tile_of(wid, nwg);
  if (tl.valid) { soff[t] = global_offset((tl.m * 256u + t) * P[2] + tl.t); }
  // (digit << 16 | tile position); positions past the tile's end take digit 255 and so stay
  // behind every real key (a stable sort keeps them in position order).
  for (var q = t; q < TILE; q = q + 256u) {
    var d = 0xffu;
    if (q < tl.n) { d = digit(key_at(tl, q)); }
    sm[slot(q)] = (d << 16u) | q;
  }
  workgroupBarrier();
  var pk: array<u32, ITEMS>;
  for (var j = 0u; j < ITEMS; j = j + 1u) { pk[j] = sm[slot(t * ITEMS + j)]; }
  rank_step(t, 16u, &pk);
  rank_step(t, 20u, &pk);
  // The first sorted slot of each digit present: where the digit differs from the slot before.
  for (var j = 0u; j < ITEMS; j = j + 1u) {
    let p = t * ITEMS + j;
    let d = (pk[j] >> 16u) & 0xffu;
    if (p < tl.n && (p == 0u || ((sm[slot(p - 1u)] >> 16u) & 0xffu) != d)) { sstart[d] = p; }
  }
  workgroupBarrier();
  for (var p = t; p < tl.n; p = p + 256u) {
    let e = sm[slot(p)];
    let d = (e >> 16u) & 0xffu;
    let q = e & 0xffffu;
    let dst = soff[d] + p - sstart[d];
    if (LAST) {
      let m = dst / P[1];
      let i = dst - m * P[1];
      let idx = index_at(tl, q);
$GATHER
    } else {
      st_key(dst, key_at(tl, q));
      IO[dst] = index_at(tl, q);
    }
  }
}
