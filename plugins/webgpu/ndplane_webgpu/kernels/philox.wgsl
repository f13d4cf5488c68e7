// philox.wgsl: random_bits, the Philox-4x32-10 stream (Salmon et al., SC'11), bit-identical
// to ndplane.backend.reference.random_bits: word w of out is word w % 4 of
// Philox(key, counter + w / 4), the counter a 128-bit integer.
//
// Bindings:
//   0  P    params (u32): [n, out_offset, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3] (ctr0 lowest)
//   1  OUT  out (n,) uint32, contiguous
// One thread per block of 4 words. WGSL has no 32x32->64 multiply: mulhi is built from
// 16-bit halves.
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> OUT: array<u32>;

fn mulhi(a: u32, b: u32) -> u32 {
  let al = a & 0xffffu;
  let ah = a >> 16u;
  let bl = b & 0xffffu;
  let bh = b >> 16u;
  let p0 = al * bl;
  let p1 = al * bh;
  let p2 = ah * bl;
  let p3 = ah * bh;
  let mid = (p0 >> 16u) + (p1 & 0xffffu) + (p2 & 0xffffu);
  return p3 + (p1 >> 16u) + (p2 >> 16u) + (mid >> 16u);
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let blk = gid.x + gid.y * nwg.x * 256u;
  let n = P[0];
  if (blk >= (n + 3u) / 4u) { return; }
  // 128-bit counter + blk, carrying through the four words.
  var c0 = P[4] + blk;
  var carry = select(0u, 1u, c0 < blk);
  var c1 = P[5] + carry;
  carry = select(0u, 1u, carry == 1u && c1 == 0u);
  var c2 = P[6] + carry;
  carry = select(0u, 1u, carry == 1u && c2 == 0u);
  var c3 = P[7] + carry;
  var k0 = P[2];
  var k1 = P[3];
  for (var r = 0; r < 10; r = r + 1) {
    let h0 = mulhi(0xD2511F53u, c0);
    let l0 = 0xD2511F53u * c0;
    let h1 = mulhi(0xCD9E8D57u, c2);
    let l1 = 0xCD9E8D57u * c2;
    c0 = h1 ^ c1 ^ k0;
    c1 = l1;
    c2 = h0 ^ c3 ^ k1;
    c3 = l0;
    k0 = k0 + 0x9E3779B9u;
    k1 = k1 + 0xBB67AE85u;
  }
  var w = array<u32, 4>(c0, c1, c2, c3);
  let base = blk * 4u;
  for (var q = 0u; q < 4u; q = q + 1u) {
    if (base + q < n) { OUT[P[1] + base + q] = w[q]; }
  }
}
