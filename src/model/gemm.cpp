// gemm() natively: Eigen, single-threaded per call (callers split the work into fixed panels,
// so the bits do not depend on the thread count).
#include "model/gemm.h"

#include <Eigen/Core>

namespace attnlab {

GemmSumOrder gemm_sum_order(int, bool) { return GemmSumOrder::unspecified; }

void gemm(int m, int n, int k, const float* a, int lda, const float* b, int ldb, bool b_transposed, float* c, int ldc,
          float alpha, const float* bias) {
    using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using Stride = Eigen::OuterStride<>;
    if (m <= 0 || n <= 0) return;
    Eigen::Map<RowMatrix, 0, Stride> C(c, m, n, Stride(ldc));
    if (k <= 0) {
        C.setZero();
    } else {
        const Eigen::Map<const RowMatrix, 0, Stride> A(a, m, k, Stride(lda));
        if (b_transposed) {
            const Eigen::Map<const RowMatrix, 0, Stride> B(b, n, k, Stride(ldb));
            C.noalias() = A * B.transpose();
        } else {
            const Eigen::Map<const RowMatrix, 0, Stride> B(b, k, n, Stride(ldb));
            C.noalias() = A * B;
        }
        if (alpha != 1.0f) C *= alpha;
    }
    if (bias) C.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias, n);
}

}  // namespace attnlab
