#include "analysis/pca.h"

#include <Eigen/Eigenvalues>
#include <cmath>

namespace attnlab {

namespace {

// The sign rule: the entry of largest magnitude (the first on a tie) becomes positive.
void fix_sign(Eigen::RowVectorXd& v) {
    Eigen::Index best = 0;
    for (Eigen::Index i = 1; i < v.size(); ++i)
        if (std::abs(v[i]) > std::abs(v[best])) best = i;
    if (v.size() && v[best] < 0) v = -v;
}

}  // namespace

Pca2 pca2(const Eigen::Ref<const RowMatrixXd>& X) {
    const Eigen::Index n = X.rows(), d = X.cols();
    Pca2 out;
    out.mean = X.colwise().mean();                                                       // (d)
    const RowMatrixXd centered = X.rowwise() - out.mean;                                 // (n, d)
    const Eigen::MatrixXd C = centered.transpose() * centered / static_cast<double>(n);  // (d, d)
    out.total_variance = C.trace();
    // Eigenvalues come in increasing order: the last two columns are the axes we want.
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(C);
    for (int k = 0; k < 2; ++k) {
        const Eigen::Index col = d - 1 - k;
        if (col < 0) {
            out.axis[static_cast<size_t>(k)] = Eigen::RowVectorXd::Zero(d);
            continue;
        }
        out.axis[static_cast<size_t>(k)] = eig.eigenvectors().col(col).transpose();
        fix_sign(out.axis[static_cast<size_t>(k)]);
        out.variance[static_cast<size_t>(k)] = std::max(0.0, eig.eigenvalues()[col]);  // rounding can dip below 0
    }
    return out;
}

std::array<double, 2> project(const Pca2& pca, const Eigen::Ref<const Eigen::RowVectorXd>& x) {
    const Eigen::RowVectorXd c = x - pca.mean;
    return {c.dot(pca.axis[0]), c.dot(pca.axis[1])};
}

}  // namespace attnlab
