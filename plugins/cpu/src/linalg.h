// The optional extension kernels: batched LAPACK linear algebra (linalg.cc).
// (The FFT is ducc0's, called from Python: ndplane_cpu/_fft.py.)
#pragma once

#include "common.h"

namespace ndp {

// A singular / not positive-definite / non-converging input: raised in Python
// as the exception registered by set_linalg_error (NumPy's LinAlgError, a ValueError).
struct linalg_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Op codes in the order of the names ndplane.backend.ops.LINALG_OPS lists.
enum LinalgOp : int {
    L_CHOLESKY, L_QR, L_SVD, L_SVDVALS, L_EIGH, L_EIGVALSH, L_SOLVE, L_INV, L_DET, L_SLOGDET, NLINALG
};
const char* linalg_name(int op);

// linalg(op, inputs (C-contiguous (B, M, N), ...), outputs (C-contiguous, fresh));
// shapes per op as in Backend.linalg's docstring, all checked here.
void run_linalg(int op, const View* in, int nin, const View* out, int nout);

}  // namespace ndp
