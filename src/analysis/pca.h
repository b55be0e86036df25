#pragma once
// Principal component analysis of a small point set, for the separability panel's 2-D view
// of the weighted unit vectors alpha_i x_i (PAPER.md §4). Pure math, double precision.
//
// Points are the rows of X (n, d). With the mean m = (1/n) sum_i x_i and the covariance
// C = (1/n) sum_i (x_i - m)(x_i - m)^T (population convention), the axes are C's eigenvectors
// for its two largest eigenvalues, which are the variances along them. An eigenvector's sign is
// arbitrary; we fix it so that its entry of largest magnitude (the first such on a tie) is
// positive, which makes the picture the same on every platform and from frame to frame.
//
// Cost: O(n d^2) for C plus O(d^3) for the eigen-decomposition: meant for head vectors
// (d = 64), fine up to a few hundred dimensions.
#include <Eigen/Core>
#include <array>

#include "analysis/selection.h"

namespace attnlab {

struct Pca2 {
    Eigen::RowVectorXd mean;                  // (d)
    std::array<Eigen::RowVectorXd, 2> axis;   // unit vectors (d); the second is 0 when d == 1
    std::array<double, 2> variance = {0, 0};  // along each axis, largest first
    double total_variance = 0;                // trace of C: what share the picture keeps
};

// The top-2 principal axes of the rows of X (n >= 1, d >= 1).
Pca2 pca2(const Eigen::Ref<const RowMatrixXd>& X);

// (x - mean) . axis[0], (x - mean) . axis[1]
std::array<double, 2> project(const Pca2& pca, const Eigen::Ref<const Eigen::RowVectorXd>& x);

}  // namespace attnlab
