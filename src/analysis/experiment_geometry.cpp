// Algorithms 4 and 5 of the paper: how many selected tokens a head can tell apart (Theorem 2),
// and how the gradient of softmax grows as the temperature falls (Lemma 2). PAPER.md §4-§6.
#include <algorithm>
#include <array>
#include <cmath>

#include "analysis/experiment_heads.h"
#include "analysis/separability.h"
#include "analysis/softmax.h"
#include "base/random.h"

namespace attnlab {

bool run_separability(const AttentionCapture& c, const ExperimentOptions& o, ExperimentResult& out, std::string& error,
                      const ExperimentProgress& progress) {
    const int heads = c.layers() * c.n_head();
    const int T = c.length();
    const std::vector<int>& Ns = o.separability_Ns;
    const int n_min = *std::min_element(Ns.begin(), Ns.end());
    std::vector<std::vector<std::vector<double>>> rows(static_cast<size_t>(heads));
    std::vector<std::string> errors(static_cast<size_t>(heads));
    std::vector<long long> lower_undefined(static_cast<size_t>(heads), 0);
    long long done = 0;
    for_each_head(o.slice, heads, progress, done, heads, "separability", [&](int index) {
        const HeadInputs h = head_inputs(c, index / c.n_head(), index % c.n_head(), o.residual_vectors);
        RowMatrixXd unit;
        if (!normalize_rows(h.x, o.M, unit, errors[static_cast<size_t>(index)])) return;
        RowMatrixXd unit_gram;
        unit_gram.noalias() = unit * unit.transpose();  // (T, T), shared by all queries of the head
        const GramRows unit_rows(unit_gram);
        // ratio, N_s, r, delta, lower, upper per N, over the queries that see > N tokens
        std::vector<std::array<Summary, 6>> s(Ns.size());
        std::vector<int> valid;
        for (int t = n_min; t < T; ++t) {
            valid.clear();
            for (int N : Ns)
                if (N <= t) valid.push_back(N);
            const std::vector<Separability> r = separability(softmax(h.logits(t), 1.0), unit.topRows(t + 1), valid, o.M, &unit_rows);
            for (size_t k = 0, v = 0; k < Ns.size(); ++k) {
                if (Ns[k] > t) continue;
                const Separability& q = r[v++];
                auto& acc = s[k];
                acc[0].add(q.ratio);
                acc[1].add(q.N_s);
                acc[2].add(q.r);
                if (q.N >= 2) acc[3].add(q.delta);
                if (std::isfinite(q.lower)) acc[4].add(q.lower);
                else ++lower_undefined[static_cast<size_t>(index)];
                acc[5].add(q.upper);
            }
        }
        for (size_t k = 0; k < Ns.size(); ++k) {
            const auto& a = s[k];
            std::vector<double> row = {double(h.layer), double(h.head), double(T), double(Ns[k]), double(a[0].n), double(Ns[k])};
            for (const Summary& f : a) {
                row.push_back(f.mean_or_nan());
                row.push_back(f.sd());
            }
            rows[static_cast<size_t>(index)].push_back(std::move(row));
        }
    });
    for (const std::string& e : errors)
        if (!e.empty()) {
            error = "separability: " + e;
            return false;
        }
    Table table{"separability",
                {"layer", "head", "L", "N", "queries", "skipped", "ratio_mean", "ratio_sd", "N_s_mean", "N_s_sd", "r_mean", "r_sd",
                 "delta_mean", "delta_sd", "lower_mean", "lower_sd", "upper_mean", "upper_sd"},
                {}};
    // A head's record: its count of undefined lower bounds, then its rows.
    const auto save = [&](int index) {
        std::vector<double> r = {double(lower_undefined[static_cast<size_t>(index)])};
        const std::vector<double> flat = flatten_rows(rows[static_cast<size_t>(index)]);
        r.insert(r.end(), flat.begin(), flat.end());
        return r;
    };
    const auto load = [&](int index, const std::vector<double>& r) {
        if (r.empty()) return false;
        lower_undefined[static_cast<size_t>(index)] = static_cast<long long>(r[0]);
        return unflatten_rows(std::vector<double>(r.begin() + 1, r.end()), table.columns.size(), rows[static_cast<size_t>(index)]);
    };
    if (!exchange_records(o.slice, 4000, heads, save, load, error)) return false;
    if (!builds_tables(o.slice)) return true;
    append_in_order(rows, table);
    for (int N : Ns) {
        out.queries_used += static_cast<long long>(heads) * (T - N);
        out.queries_skipped += static_cast<long long>(heads) * N;
    }
    long long undefined = 0;
    for (long long u : lower_undefined) undefined += u;
    if (undefined) out.notes.push_back(std::to_string(undefined) + " query lower bounds were undefined (r = 0) and left out of lower_mean");
    out.notes.push_back("vectors are L2-normalized onto the sphere of radius M = " + std::to_string(o.M) +
                        "; a selected token counts when its distance to s is strictly below r");
    out.tables.push_back(std::move(table));
    return true;
}

namespace {

// A head's gradient summaries as one record: (n, mean, m2) per Summary of g, then of J, then J_max.
template <typename HeadGradient>
std::vector<double> gradient_record(const HeadGradient& hg) {
    std::vector<double> r;
    for (const auto* list : {&hg.g, &hg.J})
        for (const Summary& s : *list) r.insert(r.end(), {double(s.n), s.mean, s.m2});
    r.insert(r.end(), hg.J_max.begin(), hg.J_max.end());
    return r;
}

template <typename HeadGradient>
bool read_gradient_record(const std::vector<double>& r, HeadGradient& hg) {
    if (r.size() != 3 * (hg.g.size() + hg.J.size()) + hg.J_max.size()) return false;
    size_t at = 0;
    for (auto* list : {&hg.g, &hg.J})
        for (Summary& s : *list) {
            s.n = static_cast<long long>(r[at]);
            s.mean = r[at + 1];
            s.m2 = r[at + 2];
            at += 3;
        }
    for (double& m : hg.J_max) m = r[at++];
    return true;
}

}  // namespace

bool run_gradient(const AttentionCapture& c, const ExperimentOptions& o, ExperimentResult& out, std::string& error,
                  const ExperimentProgress& progress) {
    const int heads = c.layers() * c.n_head();
    const int T = c.length();
    const size_t nT = o.temperatures.size(), nE = o.eps.size();
    const double paper_scale = std::sqrt(static_cast<double>(c.head_dim()));  // the paper's T = ours * sqrt(d_head)
    // Per head: g per (temperature, eps), ||J||_2 per temperature (mean and max over queries).
    struct HeadGradient {
        std::vector<Summary> g;  // (nT, nE)
        std::vector<Summary> J;  // (nT)
        std::vector<double> J_max;
    };
    std::vector<HeadGradient> per_head(static_cast<size_t>(heads));
    long long done = 0;
    for (HeadGradient& hg : per_head) {
        hg.g.assign(nT * nE, Summary{});
        hg.J.assign(nT, Summary{});
        hg.J_max.assign(nT, 0.0);
    }
    for_each_head(o.slice, heads, progress, done, heads, "gradient", [&](int index) {
        const HeadInputs h = head_inputs(c, index / c.n_head(), index % c.n_head(), o.residual_vectors);
        HeadGradient& hg = per_head[static_cast<size_t>(index)];
        for (int t = 1; t < T; ++t) {  // row 0 sees one token: its weight is 1 whatever the logits
            const std::vector<double> l = h.logits(t);
            const std::vector<double> v =
                random_unit_vector(t + 1, derive_seed(o.seed, static_cast<std::uint64_t>(index), static_cast<std::uint64_t>(t), 5));
            for (size_t i = 0; i < nT; ++i) {
                const double temp = o.temperatures[i];
                const std::vector<double> base = softmax(l, temp);
                const double J = softmax_jacobian_norm(base, temp);
                hg.J[i].add(J);
                hg.J_max[i] = std::max(hg.J_max[i], J);
                for (size_t e = 0; e < nE; ++e) hg.g[i * nE + e].add(finite_difference_sensitivity(l, base, v, temp, o.eps[e]));
            }
        }
    });
    const auto save = [&](int index) { return gradient_record(per_head[static_cast<size_t>(index)]); };
    const auto load = [&](int index, const std::vector<double>& r) {
        return read_gradient_record(r, per_head[static_cast<size_t>(index)]);
    };
    if (!exchange_records(o.slice, 5000, heads, save, load, error)) return false;
    if (!builds_tables(o.slice)) return true;

    Table table{"gradient",
                {"layer", "head", "T", "T_paper", "eps", "queries", "skipped", "g_mean", "g_sd", "jacobian_norm_mean", "jacobian_norm_max",
                 "bound_paper", "bound_tight", "bound_g"},
                {}};
    Table summary{"gradient_summary",
                  {"T", "T_paper", "eps", "g_max_over_heads", "g_mean_over_heads", "jacobian_norm_max_over_heads",
                   "jacobian_norm_max_over_queries", "bound_paper", "bound_tight", "bound_g"},
                  {}};
    for (int index = 0; index < heads; ++index) {
        const HeadGradient& hg = per_head[static_cast<size_t>(index)];
        for (size_t i = 0; i < nT; ++i)
            for (size_t e = 0; e < nE; ++e) {
                const double temp = o.temperatures[i], eps = o.eps[e];
                const Summary& g = hg.g[i * nE + e];
                table.rows.push_back({double(index / c.n_head()), double(index % c.n_head()), temp, temp * paper_scale, eps, double(g.n),
                                      1.0, g.mean_or_nan(), g.sd(), hg.J[i].mean_or_nan(), hg.J_max[i], jacobian_bound_paper(temp),
                                      jacobian_bound_tight(temp), sensitivity_bound_tight(temp, eps)});
            }
    }
    for (size_t i = 0; i < nT; ++i)
        for (size_t e = 0; e < nE; ++e) {
            const double temp = o.temperatures[i], eps = o.eps[e];
            double g_max = 0, g_sum = 0, J_max = 0, J_max_q = 0;
            for (const HeadGradient& hg : per_head) {
                const double g = hg.g[i * nE + e].mean_or_nan();
                g_max = std::max(g_max, g);
                g_sum += g;
                J_max = std::max(J_max, hg.J[i].mean_or_nan());
                J_max_q = std::max(J_max_q, hg.J_max[i]);
            }
            summary.rows.push_back({temp, temp * paper_scale, eps, g_max, g_sum / heads, J_max, J_max_q, jacobian_bound_paper(temp),
                                    jacobian_bound_tight(temp), sensitivity_bound_tight(temp, eps)});
        }
    out.queries_used = static_cast<long long>(heads) * (T - 1);
    out.queries_skipped = heads;
    out.notes.push_back(
        "T is AttnLab's temperature on GPT-2's scaled logits q.k/sqrt(d_head): T = 1 is GPT-2; the paper's T is T_paper = T * "
        "sqrt(d_head)");
    out.notes.push_back(
        "g(T, eps) = ||softmax((l + eps v)/T) - softmax(l/T)|| / eps with a seeded random unit v per query; "
        "g_max_over_heads is the paper's statistic (mean over queries, max over heads)");
    out.tables.push_back(std::move(summary));
    out.tables.push_back(std::move(table));
    return true;
}

}  // namespace attnlab
