#include "analysis/separability.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace attnlab {

bool normalize_rows(const Eigen::Ref<const RowMatrixXd>& x, double M, RowMatrixXd& out, std::string& error) {
    out.resize(x.rows(), x.cols());
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        const double norm = x.row(i).norm();
        if (!(norm > 0.0) || !std::isfinite(norm)) {
            error = "vector " + std::to_string(i) + (norm > 0.0 ? " is not finite" : " is zero") +
                    ": it cannot be normalized onto the sphere for the separability analysis";
            return false;
        }
        out.row(i) = x.row(i) * (M / norm);
    }
    return true;
}

std::vector<Separability> separability(std::span<const double> weights, const Eigen::Ref<const RowMatrixXd>& unit, std::span<const int> Ns,
                                       double M, const GramRows* unit_gram) {
    const Eigen::Index L = unit.rows();
    assert(static_cast<Eigen::Index>(weights.size()) == L && !Ns.empty());
    const std::vector<int> order = selection_order(weights);
    const Eigen::Map<const Eigen::VectorXd> alpha(weights.data(), L);
    const bool fast = unit_gram != nullptr;
    const RowMatrixXd U = fast ? RowMatrixXd() : RowMatrixXd(alpha.asDiagonal() * unit);  // u_i = alpha_i xh_i: (L, d)
    const double M2 = M * M;

    std::vector<int> by_size(Ns.size());
    for (size_t i = 0; i < by_size.size(); ++i) by_size[i] = static_cast<int>(i);
    std::sort(by_size.begin(), by_size.end(), [&](int a, int b) { return Ns[static_cast<size_t>(a)] < Ns[static_cast<size_t>(b)]; });
    const int n_max = Ns[static_cast<size_t>(by_size.back())];
    assert(Ns[static_cast<size_t>(by_size.front())] >= 1 && n_max < L);
    std::vector<Separability> out(Ns.size());

    std::vector<char> in_selection(static_cast<size_t>(L), 0);
    Eigen::RowVectorXd s = Eigen::RowVectorXd::Zero(fast ? 0 : unit.cols());
    Eigen::VectorXd dots = Eigen::VectorXd::Zero(fast ? L : 0);  // u_i . s
    double s_sq = 0.0, a1_all = 0.0, a2_all = 0.0;
    double min_delta = std::numeric_limits<double>::infinity();
    size_t next = 0;
    for (int k = 0; k < n_max; ++k) {
        const int j = order[static_cast<size_t>(k)];
        // delta: the new token against those already selected.
        for (int m = 0; m < k; ++m) {
            const int o = order[static_cast<size_t>(m)];
            const double d = fast ? std::sqrt(std::max(0.0, 2.0 * M2 - 2.0 * unit_gram->row(j)[o])) : (unit.row(j) - unit.row(o)).norm();
            min_delta = std::min(min_delta, d);
        }
        in_selection[static_cast<size_t>(j)] = 1;
        a1_all += alpha[j];
        a2_all += alpha[j] * alpha[j];
        if (fast) {
            s_sq += 2.0 * dots[j] + alpha[j] * alpha[j] * M2;  // |s + u_j|^2, with dots[j] = u_j . s before the step
            dots.array() += alpha[j] * alpha.array() * Eigen::Map<const Eigen::ArrayXd>(unit_gram->row(j), L);
        } else {
            s += U.row(j);
        }
        const int N = k + 1;
        for (; next < by_size.size() && Ns[static_cast<size_t>(by_size[next])] == N; ++next) {
            Separability& r = out[static_cast<size_t>(by_size[next])];
            r.N = N;
            const Eigen::VectorXd dist = fast ? Eigen::VectorXd((alpha.array().square() * M2 + s_sq - 2.0 * dots.array()).max(0.0).sqrt())
                                              : Eigen::VectorXd((U.rowwise() - s).rowwise().norm());
            r.r = std::numeric_limits<double>::infinity();
            for (Eigen::Index i = 0; i < L; ++i)
                if (!in_selection[static_cast<size_t>(i)]) r.r = std::min(r.r, dist[i]);
            for (int m = 0; m < N; ++m) r.N_s += dist[order[static_cast<size_t>(m)]] < r.r;
            r.ratio = static_cast<double>(r.N_s) / N;

            r.delta = N >= 2 ? min_delta : 0.0;
            const double cross = M2 - 0.5 * r.delta * r.delta;
            double xi_sum = 0.0, upper_sum = 0.0;
            r.xi.resize(static_cast<size_t>(N));
            for (int m = 0; m < N; ++m) {
                const double a = alpha[order[static_cast<size_t>(m)]];
                const double a1 = a1_all - a, a2 = std::max(a2_all - a * a, 0.0);
                const double xi = std::sqrt(std::max(0.0, M2 * a2 + cross * (a1 * a1 - a2)));
                r.xi[static_cast<size_t>(m)] = xi;
                xi_sum += xi;
                const double excess = std::max(0.0, xi - r.r);
                upper_sum += std::exp(-excess * excess / (2.0 * M2));
            }
            r.lower = r.r > 0.0 ? 1.0 - xi_sum / (r.r * N) : -std::numeric_limits<double>::infinity();
            r.upper = upper_sum / N;
        }
    }
    return out;
}

}  // namespace attnlab
