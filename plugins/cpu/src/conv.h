// Convolution and pooling over NCHW images (the "fused:conv2d" capability).
#pragma once

#include "common.h"

namespace ndp {

// Codes in the fused op table, after kernels.h's FusedOp codes.
enum ConvOp : int { FU_CONV2D = 64 };

// Which pass of conv2d a call runs (params["grad"]: absent, "input", "weight", "bias").
enum ConvPass : int { CONV_FORWARD, CONV_GRAD_INPUT, CONV_GRAD_WEIGHT, CONV_GRAD_BIAS };

struct ConvParams {
    int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
    int pass = CONV_FORWARD;
};

// conv2d, one pass; every View C-contiguous, one float dtype (float32 or float64):
//   forward:     a = x (N, C, H, W), b = weight (O, C/G, KH, KW), c = bias (O,) or null, out (N, O, OH, OW)
//   grad input:  a = g (N, O, OH, OW), b = weight, out = grad x (N, C, H, W)
//   grad weight: a = x, b = g, out = grad weight (O, C/G, KH, KW)
//   grad bias:   a = g, out = grad bias (O,)
void run_conv2d(const ConvParams& p, const View& a, const View* b, const View* c, const View& out);

}  // namespace ndp
