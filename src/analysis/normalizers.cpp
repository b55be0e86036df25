#include "analysis/normalizers.h"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numbers>

#include "analysis/softmax.h"
#include "model/entmax_solve.h"

namespace attnlab {

namespace {

double max_of(std::span<const double> v) { return *std::max_element(v.begin(), v.end()); }
double min_of(std::span<const double> v) { return *std::min_element(v.begin(), v.end()); }

// z = (l - max l) / T: the largest z is exactly 0. Sparsemax and entmax are invariant to a
// common shift of z (tau absorbs it), and with the top at 0 every z on the support lies in
// [-1/(alpha-1), 0], so the sums that find tau add numbers of size <= 1, whatever the logits.
std::vector<double> shifted_scaled(std::span<const double> logits, double T) {
    const double top = max_of(logits);
    std::vector<double> z(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) z[i] = (logits[i] - top) / T;
    return z;
}

std::vector<double> sorted_descending(std::vector<double> v) {
    std::sort(v.begin(), v.end(), std::greater<double>());
    return v;
}

}  // namespace

// --- sparsemax -------------------------------------------------------------------------
// Martins & Astudillo 2016, Alg. 1: with z sorted descending, the support size is the
// largest k with 1 + k z_(k) > sum_{j<=k} z_(j), and tau = (sum_{j<=k} z_(j) - 1) / k.
std::vector<double> sparsemax(std::span<const double> logits, double T) {
    assert(!logits.empty() && T > 0.0);
    std::vector<double> z = shifted_scaled(logits, T);
    const std::vector<double> zs = sorted_descending(z);
    double cumsum = 0.0, support_sum = 0.0;
    size_t support = 0;
    for (size_t k = 1; k <= zs.size(); ++k) {
        cumsum += zs[k - 1];
        if (1.0 + static_cast<double>(k) * zs[k - 1] > cumsum) {
            support = k;
            support_sum = cumsum;
        }
    }
    const double tau = (support_sum - 1.0) / static_cast<double>(support);
    // Written as a branch, not max(z - tau, 0), so that off the support the weight is 0.0
    // by construction, not by the luck of a subtraction.
    for (double& x : z) x = (x > tau) ? x - tau : 0.0;
    return z;
}

// --- 1.5-entmax, exact -------------------------------------------------------------------
// Peters, Niculae & Martins 2019, Alg. 2, with the threshold the model's rows use
// (entmax_solve.h: entmax15_threshold).
std::vector<double> entmax15(std::span<const double> logits, double T) {
    assert(!logits.empty() && T > 0.0);
    std::vector<double> x = shifted_scaled(logits, T);
    for (double& v : x) v *= 0.5;  // (alpha - 1) z
    std::vector<double> xs = x;
    const double tau = entmax15_threshold(xs);
    for (double& v : x) v = (v > tau) ? (v - tau) * (v - tau) : 0.0;
    return x;
}

// --- alpha-entmax, any alpha > 1 ------------------------------------------------------------
// The model's double solver (entmax_solve.h), anchored on the last key of the support; it was
// bisection on log p_max here, which lost every digit past alpha ~ 20 for close keys.
std::vector<double> entmax_bisect(std::span<const double> logits, double T, double alpha) {
    assert(!logits.empty() && T > 0.0 && alpha > 1.0);
    std::vector<double> p(logits.size());
    entmax_relative_to_last_key(logits.data(), static_cast<int>(logits.size()), T, alpha, p.data());
    return p;
}

namespace {

// --- SSMax -----------------------------------------------------------------------------------
double ssmax_beta(size_t L, double T, double scale) { return scale * std::log(static_cast<double>(L)) / T; }

}  // namespace

std::vector<double> ssmax(std::span<const double> logits, double T, double scale) {
    assert(!logits.empty() && T > 0.0);
    const double beta = ssmax_beta(logits.size(), T, scale);
    // Shift by the logit that becomes the largest after scaling (the min when beta < 0), so
    // every scaled logit is <= 0: no overflow, and no inf - inf even for an extreme beta.
    const double anchor = (beta >= 0.0) ? max_of(logits) : min_of(logits);
    std::vector<double> x(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) x[i] = beta * (logits[i] - anchor);
    return softmax(x, 1.0);
}

// --- SA-softmax ------------------------------------------------------------------------------
// The pieces both the weights and the Jacobian need, with x = l/T:
//   q = softmax(x), u_i = x_i - lo, lo = min(x_min, 0), w_i = u_i q_i, W = sum w.
// (The 1/(hi - lo) of the definition cancels in w / sum w, so it is left out here; it only
// matters for the fallback test "range == 0", which implies W == 0 anyway: all x = 0.)
struct SaParts {
    std::vector<double> q;
    std::vector<double> w;
    double W = 0.0;
    int argmin = -1;  // the token whose logit is lo when x_min < 0, else -1 (lo = 0 is constant)
};

namespace {

SaParts sa_parts(std::span<const double> logits, double T) {
    SaParts s;
    s.q = softmax(logits, T);
    const auto it = std::min_element(logits.begin(), logits.end());
    const double lo_l = std::min(*it, 0.0);  // lo in logit units: sign(x_min) = sign(l_min)
    if (*it < 0.0) s.argmin = static_cast<int>(it - logits.begin());
    s.w.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) {
        // (l_i - lo_l) / T in one division; exactly 0 at the argmin.
        s.w[i] = (logits[i] - lo_l) / T * s.q[i];
        s.W += s.w[i];
    }
    return s;
}

}  // namespace

std::vector<double> sa_softmax(std::span<const double> logits, double T) {
    assert(!logits.empty() && T > 0.0);
    SaParts s = sa_parts(logits, T);
    // W == 0 exactly when all x are equal and <= 0 (this includes the zero range, all x = 0):
    // every re-weighting factor is 0 and w / sum w is 0/0. Fall back to softmax(x), uniform there.
    if (!(s.W > 0.0)) return s.q;
    for (double& v : s.w) v /= s.W;
    return s.w;
}

// --- dispatch ----------------------------------------------------------------------------------
std::vector<double> normalize(const Normalizer& n, std::span<const double> logits, double T) {
    switch (n.kind) {
        case NormalizerKind::Softmax: return softmax(logits, T);
        case NormalizerKind::Sparsemax: return sparsemax(logits, T);
        case NormalizerKind::Entmax:
            if (n.alpha == 1.0) return softmax(logits, T);
            if (n.alpha == 1.5) return entmax15(logits, T);
            if (n.alpha == 2.0) return sparsemax(logits, T);
            return entmax_bisect(logits, T, n.alpha);
        case NormalizerKind::Ssmax: return ssmax(logits, T, n.scale);
        case NormalizerKind::SaSoftmax: return sa_softmax(logits, T);
    }
    return {};
}

namespace {

// Sparsemax and entmax (alpha > 1) share softmax's form J = (1/T)(diag g - g g^T / sum g),
// with g the support indicator (sparsemax) or p^{2-alpha} on the support (entmax; the (alpha-1)
// of the definition cancels between p's derivative and tau's; alpha = 1 would give g = p,
// softmax). Writing r = g / G, G = sum g, gives J = (G/T)(diag r - r r^T), r on the simplex.
// Returns r and sets G.
std::vector<double> sparse_jacobian_weights(const Normalizer& n, std::span<const double> logits, double T, double& G) {
    std::vector<double> r = normalize(n, logits, T);
    const bool is_sparsemax = n.kind == NormalizerKind::Sparsemax || n.alpha == 2.0;
    G = 0.0;
    for (double& x : r) {
        if (!(x > 0.0)) x = 0.0;  // off the support (also avoids 0^{negative} for alpha > 2)
        else x = is_sparsemax ? 1.0 : std::pow(x, 2.0 - n.alpha);
        G += x;
    }
    for (double& x : r) x /= G;
    return r;
}

// c (diag r - r r^T), L x L. Filled by hand: Eigen would send the outer product through its
// threaded matrix-product kernel, which costs more than the L^2 multiplications themselves.
Eigen::MatrixXd scaled_diag_minus_outer(const std::vector<double>& r, double c) {
    const Eigen::Index L = static_cast<Eigen::Index>(r.size());
    Eigen::MatrixXd J(L, L);
    for (Eigen::Index k = 0; k < L; ++k) {
        const double ck = c * r[static_cast<size_t>(k)];
        for (Eigen::Index i = 0; i < L; ++i) J(i, k) = -ck * r[static_cast<size_t>(i)];
        J(k, k) += ck;
    }
    return J;
}

// SA-softmax, with x = l/T, h = q + w and e = the indicator of the argmin when x_min < 0
// (0 otherwise): product and quotient rule on alpha = w / W give
//     d alpha / d x = (diag h - alpha h^T - (q - alpha) e^T) / W.
// Derivation: d w_i/d x_k = q_i (delta_ik - e_k) + w_i (delta_ik - q_k) (d u_i/d x_k =
// delta_ik - e_k, d q_i/d x_k = q_i (delta_ik - q_k)), so d W/d x_k = q_k - e_k + w_k - W q_k,
// and (d w - alpha dW) / W collapses to the form above. Each column sums to 0, as it must.
Eigen::MatrixXd sa_softmax_jacobian(std::span<const double> logits, double T) {
    const SaParts s = sa_parts(logits, T);
    if (!(s.W > 0.0)) return scaled_diag_minus_outer(s.q, 1.0 / T);  // the softmax fallback
    const Eigen::Index L = static_cast<Eigen::Index>(logits.size());
    const Eigen::Map<const Eigen::VectorXd> q(s.q.data(), L), w(s.w.data(), L);
    const Eigen::VectorXd h = q + w;
    const Eigen::VectorXd a = w / s.W;
    const double c = 1.0 / (s.W * T);
    Eigen::MatrixXd J(L, L);
    for (Eigen::Index k = 0; k < L; ++k) {
        J.col(k) = (-c * h(k)) * a;
        J(k, k) += c * h(k);
    }
    if (s.argmin >= 0) J.col(s.argmin) -= c * (q - a);
    return J;
}

}  // namespace

Eigen::MatrixXd normalizer_jacobian(const Normalizer& n, std::span<const double> logits, double T) {
    assert(!logits.empty() && T > 0.0);
    const bool entmax_is_softmax = n.kind == NormalizerKind::Entmax && n.alpha == 1.0;
    if (n.kind == NormalizerKind::Softmax || entmax_is_softmax) return scaled_diag_minus_outer(softmax(logits, T), 1.0 / T);
    if (n.kind == NormalizerKind::Ssmax) {
        const double beta = ssmax_beta(logits.size(), T, n.scale);
        return scaled_diag_minus_outer(ssmax(logits, T, n.scale), beta);
    }
    if (n.kind == NormalizerKind::SaSoftmax) return sa_softmax_jacobian(logits, T);
    double G = 0.0;  // sparsemax, entmax
    const std::vector<double> r = sparse_jacobian_weights(n, logits, T, G);
    return scaled_diag_minus_outer(r, G / T);
}

double normalizer_jacobian_norm(const Normalizer& n, std::span<const double> logits, double T) {
    assert(!logits.empty() && T > 0.0);
    switch (n.kind) {
        case NormalizerKind::Softmax: return softmax_jacobian_norm(softmax(logits, T), T);
        case NormalizerKind::Ssmax: {
            // beta (diag p - p p^T) with diag p - p p^T positive semi-definite: |beta| lambda_max.
            const double beta = ssmax_beta(logits.size(), T, n.scale);
            return std::abs(beta) * softmax_jacobian_norm(ssmax(logits, T, n.scale), 1.0);
        }
        case NormalizerKind::SaSoftmax: {
            // sigma_max(J)^2 = lambda_max(J^T J). The symmetric eigen-solver is about 6x faster
            // than an SVD (0.3 s against 1.7 s at L = 1024) and loses nothing on the largest
            // singular value: lambda_max is found to eps * ||J^T J|| = eps * sigma_max^2.
            // J is scaled to a largest entry of 1 first: near one-hot its entries can be 1e-200,
            // whose squares would underflow to 0.
            Eigen::MatrixXd J = sa_softmax_jacobian(logits, T);
            const double top = J.cwiseAbs().maxCoeff();
            if (top == 0.0) return 0.0;
            J /= top;
            Eigen::MatrixXd JtJ(J.cols(), J.cols());
            JtJ.noalias() = J.transpose() * J;
            const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(JtJ, Eigen::EigenvaluesOnly);
            return top * std::sqrt(std::max(eig.eigenvalues().maxCoeff(), 0.0));
        }
        case NormalizerKind::Sparsemax:
        case NormalizerKind::Entmax: {
            if (n.kind == NormalizerKind::Entmax && n.alpha == 1.0) return softmax_jacobian_norm(softmax(logits, T), T);
            double G = 0.0;
            const std::vector<double> r = sparse_jacobian_weights(n, logits, T, G);
            return G * softmax_jacobian_norm(r, T);  // J = (G/T)(diag r - r r^T)
        }
    }
    return 0.0;
}

// --- names and validation ------------------------------------------------------------------------
namespace {

std::string number(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

}  // namespace

bool check_normalizer_input(const Normalizer& n, std::span<const double> logits, double T, std::string& error) {
    if (logits.empty()) {
        error = "no logits: L must be >= 1";
        return false;
    }
    for (size_t i = 0; i < logits.size(); ++i) {
        if (!std::isfinite(logits[i])) {
            error = "logit " + std::to_string(i) + " = " + number(logits[i]) + " is not finite";
            return false;
        }
    }
    if (!(std::isfinite(T) && T > 0.0)) {
        error = "temperature T = " + number(T) + " must be finite and > 0";
        return false;
    }
    // Above ~1e3 the bisection's last-bit error, magnified by alpha - 1, underflows every
    // weight; entmax that far from 2 is argmax for any practical purpose anyway.
    if (n.kind == NormalizerKind::Entmax && !(std::isfinite(n.alpha) && n.alpha >= 1.0 && n.alpha <= 1000.0)) {
        error = "entmax alpha = " + number(n.alpha) + " must be from 1 to 1000";
        return false;
    }
    if (n.kind == NormalizerKind::Ssmax && !std::isfinite(n.scale)) {
        error = "ssmax scale s = " + number(n.scale) + " must be finite";
        return false;
    }
    return true;
}

}  // namespace attnlab
