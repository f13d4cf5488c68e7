// Fused optimizer updates (the "fused:adam" capability).
#pragma once

#include "common.h"

namespace ndp {

struct AdamParams {
    double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
    bool decoupled = false;  // AdamW: decay the parameter, not the gradient
    int64_t step = 1;        // 1-based, for the bias corrections
};

// p, m, v updated in place from g; all four C-contiguous, one float dtype, one shape.
void run_adam(const AdamParams& a, const View& p, const View& g, const View& m, const View& v);

}  // namespace ndp
