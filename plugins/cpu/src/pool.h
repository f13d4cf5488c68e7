// 2-D pooling over NCHW images (the "fused:max_pool2d" and "fused:avg_pool2d" capabilities).
#pragma once

#include "common.h"

namespace ndp {

// Codes in the fused op table, after conv.h's.
enum PoolOp : int { FU_MAX_POOL2D = 72, FU_AVG_POOL2D = 73 };

struct PoolParams {
    int64_t kh = 1, kw = 1, sh = 1, sw = 1;
    bool max = true;
    bool grad = false;  // params["grad"] == "input"
};

// One pass (src/pool.cc says the layouts): forward a = x; grad a = g, b = x (max) or null (avg).
void run_pool2d(const PoolParams& p, const View& a, const View* b, const View& out);

}  // namespace ndp
