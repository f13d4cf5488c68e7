// scan.wgsl: inclusive out[m, k] = x[m, 0] OP ... OP x[m, k] for x (M, K).
//   main:      one workgroup per row (ids beyond 65535 spill into y), for long rows
//   scan_rows: one thread per row, sequential, for many short rows
//
// Bindings:
//   0  P    params (u32): [M, K, x_offset, x_stride0, x_stride1, out_offset, out_stride0, out_stride1]
//   1  OUT  (M, K) STRIDED, the result dtype (accumulation happens in its compute type)
//   2  A    x: STRIDED in both axes
// The row is walked in chunks of 256: each chunk is scanned in workgroup memory
// (Hillis-Steele, log2(256) steps), offset by the running total of earlier chunks.
$COMMON

@group(0) @binding(0) var<storage, read> P: array<u32>;
$DECLS

$FUNCS

var<workgroup> sv: array<$ACC, 256>;

fn op(a: $ACC, b: $ACC) -> $ACC { return $OP; }

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {
  let row = wid.x + wid.y * nwg.x;
  let valid = row < P[0];
  let K = P[1];
  let xb = i32(P[2]) + i32(row) * bitcast<i32>(P[3]);
  let xs = bitcast<i32>(P[4]);
  let ob = i32(P[5]) + i32(row) * bitcast<i32>(P[6]);
  let os = bitcast<i32>(P[7]);
  var carry: $ACC = $IDENTITY;
  for (var c0 = 0u; c0 < K; c0 = c0 + 256u) {
    let k = c0 + t;
    var v: $ACC = $IDENTITY;
    if (valid && k < K) { v = $LOAD; }
    sv[t] = v;
    for (var s = 1u; s < 256u; s = s << 1u) {
      workgroupBarrier();
      var left: $ACC = $IDENTITY;
      if (t >= s) { left = sv[t - s]; }
      workgroupBarrier();
      sv[t] = op(left, sv[t]);
    }
    workgroupBarrier();
    if (valid && k < K) { st_OUT(ob + i32(k) * os, $RESULT); }
    carry = op(carry, sv[255]);
    workgroupBarrier();
  }
}

@compute @workgroup_size(256)
fn scan_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let row = gid.x + gid.y * nwg.x * 256u;
  if (row >= P[0]) { return; }
  let K = P[1];
  let xb = i32(P[2]) + i32(row) * bitcast<i32>(P[3]);
  let xs = bitcast<i32>(P[4]);
  let ob = i32(P[5]) + i32(row) * bitcast<i32>(P[6]);
  let os = bitcast<i32>(P[7]);
  var carry: $ACC = $IDENTITY;
  for (var k = 0u; k < K; k = k + 1u) {
    carry = op(carry, $LOAD);
    st_OUT(ob + i32(k) * os, carry);
  }
}
