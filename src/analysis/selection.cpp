#include "analysis/selection.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>

#include "base/random.h"

namespace attnlab {

std::vector<int> selection_order(std::span<const double> weights) {
    std::vector<int> order(weights.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return weights[a] > weights[b]; });
    return order;
}

double sum_weighted_norms(std::span<const double> weights, const Eigen::Ref<const RowMatrixXd>& x) {
    double sum = 0.0;
    for (Eigen::Index i = 0; i < x.rows(); ++i) sum += weights[static_cast<size_t>(i)] * x.row(i).norm();
    return sum;
}

namespace {

// d_1 = max_{i not in I_N, j in I_N} ||x_i - x_j||, from Gram rows: |x_i - x_j|^2 =
// g_ii + g_jj - 2 g_ij. Only the largest distance matters, so the cancellation this form
// suffers for nearly equal vectors does not reach the result. `outside` is 0 for the tokens
// left out and -inf for the selected, which keeps the loop over i branch-free and vectorised.
double max_cross_distance(const GramRows& G, const Eigen::VectorXd& sq, std::span<const int> selected, const Eigen::ArrayXd& outside) {
    const Eigen::Index L = sq.size();
    double best = 0.0;
    for (const int j : selected)
        best = std::max(best, (sq.array() + sq[j] - 2.0 * Eigen::Map<const Eigen::ArrayXd>(G.row(j), L) + outside).maxCoeff());
    return std::sqrt(std::max(best, 0.0));
}

double direct_cross_distance(const Eigen::Ref<const RowMatrixXd>& x, std::span<const int> selected, const std::vector<char>& in_selection) {
    double best = 0.0;
    for (const int j : selected)
        for (Eigen::Index i = 0; i < x.rows(); ++i)
            if (!in_selection[static_cast<size_t>(i)]) best = std::max(best, (x.row(i) - x.row(j)).squaredNorm());
    return std::sqrt(best);
}

struct MeanSe {
    double mean = 0, se = 0;
};

MeanSe mean_and_se(const Eigen::VectorXd& v) {
    const double n = static_cast<double>(v.size());
    if (v.size() == 0) return {};
    const double mean = v.mean();
    if (v.size() == 1) return {mean, 0.0};
    const double var = (v.array() - mean).square().sum() / (n - 1.0);
    return {mean, std::sqrt(var / n)};
}

}  // namespace

std::vector<SelectionDistance> selection_distances(std::span<const double> weights, const Eigen::Ref<const RowMatrixXd>& x,
                                                   std::span<const int> Ns, const DistanceOptions& options, const GramRows* gram) {
    const Eigen::Index L = x.rows(), d = x.cols();
    assert(static_cast<Eigen::Index>(weights.size()) == L && !Ns.empty());
    const Eigen::Map<const Eigen::VectorXd> alpha(weights.data(), L);
    const std::vector<int> order = selection_order(weights);

    // The Gram block: the caller's, or computed here when the Monte Carlo needs it.
    RowMatrixXd local;
    if (!gram && options.samples > 0) local.noalias() = x * x.transpose();  // (L, L)
    const GramRows local_rows(local);
    const GramRows& G = gram ? *gram : local_rows;
    const bool fast = gram != nullptr;

    const RowMatrixXd Y = alpha.asDiagonal() * x;                                                    // y_i = alpha_i x_i: (L, d)
    const Eigen::VectorXd y_sq = Y.rowwise().squaredNorm();                                          // (L)
    const Eigen::RowVectorXd y_total = Y.colwise().sum();                                            // (d)
    const Eigen::VectorXd x_sq = fast ? G.diagonal(L) : Eigen::VectorXd(x.rowwise().squaredNorm());  // (L)

    // Results are produced in increasing N while the selection grows; by_size maps back.
    std::vector<int> by_size(Ns.size());
    std::iota(by_size.begin(), by_size.end(), 0);
    std::sort(by_size.begin(), by_size.end(), [&](int a, int b) { return Ns[static_cast<size_t>(a)] < Ns[static_cast<size_t>(b)]; });
    const int n_max = Ns[static_cast<size_t>(by_size.back())];
    assert(Ns[static_cast<size_t>(by_size.front())] >= 1 && n_max < L);
    std::vector<SelectionDistance> out(Ns.size());

    // sum_{j in S} alpha_j G_ij as S grows by token j: one contiguous row of G. (The alpha_i
    // factor of y_i . s is applied once, when distances are taken.)
    auto grow_dots = [&](Eigen::VectorXd& dots, int j) { dots.noalias() += alpha[j] * Eigen::Map<const Eigen::VectorXd>(G.row(j), L); };
    // |y_i - s| for every token, from the Gram form; the caller subtracts the members.
    auto gram_distances = [&](const Eigen::VectorXd& dots, double s_sq) {
        return (y_sq.array() + s_sq - 2.0 * alpha.array() * dots.array()).max(0.0).sqrt().matrix().eval();
    };

    // --- the top-N selection, grown along the order ---------------------------------------
    std::vector<char> in_selection(static_cast<size_t>(L), 0);
    Eigen::ArrayXd left_out = Eigen::ArrayXd::Zero(options.bounds ? L : 0);  // 0, or -inf once selected
    Eigen::RowVectorXd s = Eigen::RowVectorXd::Zero(d);
    Eigen::VectorXd dots = Eigen::VectorXd::Zero(fast ? L : 0);
    double abar = 0.0, X_sq = 0.0;
    size_t next = 0;
    for (int k = 0; k < n_max; ++k) {
        const int j = order[static_cast<size_t>(k)];
        in_selection[static_cast<size_t>(j)] = 1;
        if (options.bounds) left_out[j] = -std::numeric_limits<double>::infinity();
        s += Y.row(j);
        abar += alpha[j];
        X_sq = std::max(X_sq, x_sq[j]);
        if (fast) grow_dots(dots, j);
        const int N = k + 1;
        for (; next < by_size.size() && Ns[static_cast<size_t>(by_size[next])] == N; ++next) {
            SelectionDistance& r = out[static_cast<size_t>(by_size[next])];
            r.N = N;
            r.abar = abar;
            const std::span<const int> selected(order.data(), static_cast<size_t>(N));
            if (fast) {
                const Eigen::VectorXd dist = gram_distances(dots, s.squaredNorm());
                double inside = 0.0;
                for (int i : selected) inside += dist[i];
                r.d_A = dist.sum() - inside;
                r.d_B = (y_total - 2.0 * s).norm();  // sum outside - s = total - 2 s
            } else {
                // Directly: near-zero distances (repeated tokens) must come out as zero, not as
                // the square root of a rounding error.
                Eigen::RowVectorXd rest = Eigen::RowVectorXd::Zero(d);
                for (Eigen::Index i = 0; i < L; ++i) {
                    if (in_selection[static_cast<size_t>(i)]) continue;
                    r.d_A += (Y.row(i) - s).norm();
                    rest += Y.row(i);
                }
                r.d_B = (rest - s).norm();
            }
            if (options.bounds) {
                r.X = std::sqrt(X_sq);
                // Directly without a caller's Gram matrix: nearly equal vectors must give their
                // true distance, not a rounding error of |x|^2.
                r.d_1 =
                    fast && G.whole() ? max_cross_distance(G, x_sq, selected, left_out) : direct_cross_distance(x, selected, in_selection);
                // The weight left out, summed itself: 1 - abar loses it when abar rounds to 1.
                double outside = 0.0;
                for (Eigen::Index i = 0; i < L; ++i)
                    if (!in_selection[static_cast<size_t>(i)]) outside += alpha[i];
                r.bound_A = outside * r.d_1 + r.X * (abar * static_cast<double>(L - N) - outside);
                r.bound_B = outside * r.d_1 + r.X * std::abs(abar - outside);  // |1 - 2 abar|, as abar + outside = 1
            }
            if (options.approx) {
                // sum_{j != i} y_j = y_total - y_i
                const double c = static_cast<double>(N) / static_cast<double>(L - 1);
                const RowMatrixXd shifted = ((1.0 + c) * Y).rowwise() - c * y_total;  // (L, d), rows vectorised below
                const double sum = shifted.rowwise().norm().sum();
                r.approx_A = static_cast<double>(L - N) / static_cast<double>(L) * sum;
            }
        }
    }

    // --- random selections: sample b grows along one random ordering ----------------------
    const int S = options.samples;
    if (S > 0) {
        // The orderings' first n_max tokens, by partial Fisher-Yates. The pool keeps its
        // permutation between samples; shuffling any permutation gives a uniform ordering.
        std::vector<int> members(static_cast<size_t>(S) * n_max);  // (S, n_max)
        std::vector<int> pool(static_cast<size_t>(L));
        std::iota(pool.begin(), pool.end(), 0);
        SplitMix64 rng(derive_seed(options.seed, 0x4d43));
        for (int b = 0; b < S; ++b)
            for (int k = 0; k < n_max; ++k) {
                const int pick = k + static_cast<int>(rng.uniform() * static_cast<double>(L - k));
                std::swap(pool[static_cast<size_t>(k)], pool[static_cast<size_t>(pick)]);
                members[static_cast<size_t>(b) * n_max + k] = pool[static_cast<size_t>(k)];
            }

        // Distances to s_b: either grown token by token from rows of G (O(L) per token), or,
        // when few sizes are asked for far apart (N = 1, 5, 10, 20, 100), all aggregates at once
        // through one product Y S^T (O(L d) per size, but at matrix-product speed).
        const bool by_product = !G.whole() || static_cast<double>(Ns.size()) * static_cast<double>(d) < 4.0 * n_max;
        const int B = S * static_cast<int>(Ns.size());
        RowMatrixXd sums(B, d);                                           // s_b at each size, row b * |Ns| + slot
        Eigen::MatrixXd growing(by_product ? 0 : L, by_product ? 0 : B);  // raw Gram dots, same layout
        Eigen::VectorXd sample_dots(by_product ? 0 : L);
        Eigen::RowVectorXd s_b(d);
        for (int b = 0; b < S; ++b) {
            s_b.setZero();
            sample_dots.setZero();
            next = 0;
            for (int k = 0; k < n_max; ++k) {
                const int j = members[static_cast<size_t>(b) * n_max + k];
                s_b += Y.row(j);
                if (!by_product) grow_dots(sample_dots, j);
                for (; next < by_size.size() && Ns[static_cast<size_t>(by_size[next])] == k + 1; ++next) {
                    const int column = b * static_cast<int>(Ns.size()) + by_size[next];
                    sums.row(column) = s_b;
                    if (!by_product) growing.col(column) = sample_dots;
                }
            }
        }
        const Eigen::MatrixXd products = by_product ? Eigen::MatrixXd(Y * sums.transpose()) : Eigen::MatrixXd();  // (L, B)
        std::vector<Eigen::VectorXd> d_A(Ns.size(), Eigen::VectorXd(S)), d_B(Ns.size(), Eigen::VectorXd(S));
        for (int b = 0; b < S; ++b)
            for (size_t n = 0; n < Ns.size(); ++n) {
                const int column = b * static_cast<int>(Ns.size()) + static_cast<int>(n), N = Ns[n];
                const double s_sq = sums.row(column).squaredNorm();
                const Eigen::VectorXd dist =
                    by_product ? Eigen::VectorXd((y_sq.array() + s_sq - 2.0 * products.col(column).array()).max(0.0).sqrt())
                               : gram_distances(growing.col(column), s_sq);
                double inside = 0.0;
                for (int m = 0; m < N; ++m) inside += dist[members[static_cast<size_t>(b) * n_max + m]];
                d_A[n][b] = dist.sum() - inside;
                d_B[n][b] = (y_total - 2.0 * sums.row(column)).norm();  // sum outside - s = total - 2 s
            }
        for (size_t n = 0; n < Ns.size(); ++n) {
            const MeanSe a = mean_and_se(d_A[n]), bb = mean_and_se(d_B[n]);
            out[n].expected_A = a.mean;
            out[n].expected_A_se = a.se;
            out[n].expected_B = bb.mean;
            out[n].expected_B_se = bb.se;
        }
    }
    return out;
}

}  // namespace attnlab
