// OpenBLAS's own thread count around one region of ours.
#pragma once

#include <cblas.h>

namespace ndp {

// f() with a one-thread OpenBLAS, then its count as before (also when f throws).
// NOTE: never a threaded OpenBLAS inside pool workers, nor our pool's copies between threaded
// gemms: both pools' workers spin while idle (OpenBLAS's for much longer), and on cores they
// share that ran 2-3x slower than either alone. The count is process-wide: a gemm another
// Python thread starts meanwhile runs on one thread too.
template <class F> void one_blas_thread(F&& f) {
    struct Restore {
        int before = scipy_openblas_get_num_threads();
        ~Restore() { scipy_openblas_set_num_threads(before); }
    } restore;
    scipy_openblas_set_num_threads(1);
    f();
}

}  // namespace ndp
