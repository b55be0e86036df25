// Algorithms 1-3 of the paper: the distance between a head's top-N selection and the rest,
// against the context length, against N, and the critical N where it can no longer be told
// apart from a random selection (PAPER.md §3, §6).
#include <algorithm>
#include <array>
#include <span>

#include "analysis/experiment_heads.h"
#include "analysis/ks_test.h"
#include "analysis/softmax.h"
#include "base/random.h"

namespace attnlab {

namespace {

constexpr int kFields = 8;
const char* const kFieldNames[kFields] = {"d_A", "d_B", "bound_A", "bound_B", "expected_A", "expected_B", "approx_A", "abar"};

// One head's per-query values for one N, summarised over a range of queries.
struct DistanceSummary {
    std::array<Summary, kFields> fields;
    double mc_var_sum = 0;  // sum of the per-query Monte Carlo variances of E[d_A]
    void add(const SelectionDistance& r) {
        const double v[kFields] = {r.d_A, r.d_B, r.bound_A, r.bound_B, r.expected_A, r.expected_B, r.approx_A, r.abar};
        for (int f = 0; f < kFields; ++f) fields[static_cast<size_t>(f)].add(v[f]);
        mc_var_sum += r.expected_A_se * r.expected_A_se;
    }
};

std::vector<std::string> distance_columns() {
    std::vector<std::string> c = {"layer", "head", "L", "N", "queries", "skipped"};
    for (const char* f : kFieldNames) {
        c.push_back(std::string(f) + "_mean");
        c.push_back(std::string(f) + "_sd");
    }
    c.push_back("expected_A_mc_se");  // Monte Carlo standard error of expected_A_mean
    return c;
}

std::vector<double> distance_row(const HeadInputs& h, int L, int N, long long skipped, const DistanceSummary& s) {
    const long long n = s.fields[0].n;
    std::vector<double> row = {double(h.layer), double(h.head), double(L), double(N), double(n), double(skipped)};
    for (const Summary& f : s.fields) {
        row.push_back(f.mean_or_nan());
        row.push_back(f.sd());
    }
    row.push_back(n ? std::sqrt(s.mc_var_sum) / static_cast<double>(n) : std::nan(""));
    return row;
}

// Per-query distances of one head for each N in Ns, over query rows 0..end_row-1:
// result[k][t] for Ns[k], computed only where row t sees at least N + 1 tokens (N <= t).
// The Gram matrix is over the first gram_rows >= end_row tokens: a product's rounding may depend
// on its size, and critical-n keeps it fixed so that a query's values do not depend on how far
// the search has gone (nor on which Ls a shard computes).
std::vector<std::vector<SelectionDistance>> head_distances(const HeadInputs& h, std::span<const int> Ns, int end_row, int gram_rows,
                                                           DistanceOptions options, std::uint64_t seed, std::uint64_t tag) {
    // One Gram matrix per head serves all its queries (the distances' fast path).
    RowMatrixXd gram;
    gram.noalias() = h.x.topRows(gram_rows) * h.x.topRows(gram_rows).transpose();  // (gram_rows, gram_rows)
    const GramRows rows(gram);
    std::vector<std::vector<SelectionDistance>> out(Ns.size(), std::vector<SelectionDistance>(static_cast<size_t>(end_row)));
    std::vector<int> valid;
    const int n_min = *std::min_element(Ns.begin(), Ns.end());
    for (int t = n_min; t < end_row; ++t) {
        valid.clear();
        for (int N : Ns)
            if (N <= t) valid.push_back(N);
        const std::vector<double> w = softmax(h.logits(t), 1.0);
        options.seed = derive_seed(seed, static_cast<std::uint64_t>(h.index), static_cast<std::uint64_t>(t), tag);
        const std::vector<SelectionDistance> r = selection_distances(w, h.x.topRows(t + 1), valid, options, &rows);
        for (size_t k = 0, v = 0; k < Ns.size(); ++k)
            if (Ns[k] <= t) out[k][static_cast<size_t>(t)] = r[v++];
    }
    return out;
}

int heads_of(const AttentionCapture& c) { return c.layers() * c.n_head(); }

}  // namespace

namespace {

// One table of Algorithm 1 or 2: per head, the per-query distances for `Ns` over the first
// `end_row` queries, then one row for each (L, index into Ns) point, averaged over the
// queries 0..L-1 that see more than N tokens.
struct DistancePoint {
    int L;
    size_t n;  // index into Ns
};

bool distance_table(const AttentionCapture& c, const ExperimentOptions& o, std::span<const int> Ns, int end_row,
                    const std::vector<DistancePoint>& points, const char* name, std::uint64_t tag, ExperimentResult& out,
                    std::string& error, const ExperimentProgress& progress) {
    const int heads = heads_of(c);
    std::vector<std::vector<std::vector<double>>> rows(static_cast<size_t>(heads));
    long long done = 0;
    for_each_head(o.slice, heads, progress, done, heads, experiment_name(out.kind), [&](int index) {
        const HeadInputs h = head_inputs(c, index / c.n_head(), index % c.n_head(), o.residual_vectors);
        DistanceOptions options;
        options.samples = o.samples;
        const auto per_query = head_distances(h, Ns, end_row, end_row, options, o.seed, tag);
        for (const DistancePoint& p : points) {
            const int N = Ns[p.n];
            DistanceSummary s;
            for (int t = N; t < p.L; ++t) s.add(per_query[p.n][static_cast<size_t>(t)]);
            rows[static_cast<size_t>(index)].push_back(distance_row(h, p.L, N, N, s));
        }
    });
    Table table{name, distance_columns(), {}};
    const auto save = [&](int index) { return flatten_rows(rows[static_cast<size_t>(index)]); };
    const auto load = [&](int index, const std::vector<double>& r) {
        return unflatten_rows(r, table.columns.size(), rows[static_cast<size_t>(index)]);
    };
    if (!exchange_records(o.slice, static_cast<int>(tag) * 1000, heads, save, load, error)) return false;
    if (!builds_tables(o.slice)) return true;
    append_in_order(rows, table);
    for (const DistancePoint& p : points) {
        out.queries_used += static_cast<long long>(heads) * (p.L - Ns[p.n]);
        out.queries_skipped += static_cast<long long>(heads) * Ns[p.n];
    }
    out.tables.push_back(std::move(table));
    return true;
}

}  // namespace

bool run_distance_vs_L(const AttentionCapture& c, const ExperimentOptions& o, ExperimentResult& out, std::string& error,
                       const ExperimentProgress& progress) {
    const int Ns[] = {o.N};
    std::vector<DistancePoint> points;
    for (int L : o.Ls) points.push_back({L, 0});
    return distance_table(c, o, Ns, *std::max_element(o.Ls.begin(), o.Ls.end()), points, "distance_vs_L", 1, out, error, progress);
}

bool run_distance_vs_N(const AttentionCapture& c, const ExperimentOptions& o, ExperimentResult& out, std::string& error,
                       const ExperimentProgress& progress) {
    std::vector<DistancePoint> points;
    for (size_t k = 0; k < o.Ns.size(); ++k) points.push_back({c.length(), k});
    return distance_table(c, o, o.Ns, c.length(), points, "distance_vs_N", 2, out, error, progress);
}

namespace {

constexpr int kChunk = 8;  // the critical-N search tries N in chunks of 8: 1..8, 9..16, ...

// The N of the chunk that starts at N_first: at most kChunk, each <= top_L - 1 and <= max_n.
std::vector<int> chunk_Ns(int N_first, int top_L, int max_n) {
    std::vector<int> Ns;
    for (int N = N_first; N <= std::min({N_first + kChunk - 1, top_L - 1, max_n}); ++N) Ns.push_back(N);
    return Ns;
}

// One head's means for one chunk: [i][k] = {queries, mean d_A, mean E[d_A]} over the first Ls[i]
// queries for Ns[k], for the Ls with open[i] (the others are left NaN). Ls is sorted.
using ChunkMeans = std::vector<std::vector<std::array<double, 3>>>;

ChunkMeans head_chunk_means(const AttentionCapture& c, const ExperimentOptions& o, int index, const std::vector<int>& Ls,
                            const std::vector<char>& open, const std::vector<int>& Ns) {
    const double nan = std::nan("");
    ChunkMeans mine(Ls.size(), std::vector<std::array<double, 3>>(Ns.size(), {nan, nan, nan}));
    int L_top = 0;
    for (size_t i = 0; i < Ls.size(); ++i)
        if (open[i]) L_top = Ls[i];
    const HeadInputs h = head_inputs(c, index / c.n_head(), index % c.n_head(), o.residual_vectors);
    DistanceOptions options;
    options.samples = o.critical_samples;
    options.bounds = false;
    options.approx = false;
    const auto per_query = head_distances(h, Ns, L_top, Ls.back(), options, o.seed, 3);
    for (size_t i = 0; i < Ls.size(); ++i) {
        if (!open[i]) continue;
        for (size_t k = 0; k < Ns.size(); ++k) {
            Summary d, e;
            for (int t = Ns[k]; t < Ls[i]; ++t) {
                d.add(per_query[k][static_cast<size_t>(t)].d_A);
                e.add(per_query[k][static_cast<size_t>(t)].expected_A);
            }
            mine[i][k] = {double(d.n), d.mean_or_nan(), e.mean_or_nan()};
        }
    }
    return mine;
}

std::vector<double> flatten_means(const ChunkMeans& m) {
    std::vector<double> out;
    for (const auto& per_L : m)
        for (const auto& v : per_L) out.insert(out.end(), v.begin(), v.end());
    return out;
}

// A record of a shard's chunk holds every N up to the largest L; the search may want fewer.
bool unflatten_means(const std::vector<double>& r, size_t n_L, size_t n_N, ChunkMeans& m) {
    const size_t stride = n_L ? r.size() / (3 * n_L) : 0;
    if (n_L == 0 || r.size() != 3 * n_L * stride || stride < n_N) return false;
    m.assign(n_L, std::vector<std::array<double, 3>>(n_N));
    for (size_t i = 0; i < n_L; ++i)
        for (size_t k = 0; k < n_N; ++k)
            for (size_t f = 0; f < 3; ++f) m[i][k][f] = r[(i * stride + k) * 3 + f];
    return true;
}

int chunk_stage(int N_first) { return 3000 + (N_first - 1) / kChunk; }

// A shard cannot know where the search stops (that needs every head): it computes its heads'
// means for every L and every chunk up to the largest L or max_critical_n, and keeps them.
bool critical_n_shard(const AttentionCapture& c, const ExperimentOptions& o, const std::vector<int>& Ls, std::string& error,
                      const ExperimentProgress& progress) {
    const int heads = heads_of(c);
    const std::vector<char> all(Ls.size(), 1);
    long long done = 0;
    for (int N_first = 1;; N_first += kChunk) {
        const std::vector<int> Ns = chunk_Ns(N_first, Ls.back(), o.critical_max_n);
        if (Ns.empty()) return true;
        std::vector<ChunkMeans> means(static_cast<size_t>(heads));
        for_each_head(o.slice, heads, progress, done, done + heads,
                      "critical-n, N " + std::to_string(N_first) + ".." + std::to_string(Ns.back()),
                      [&](int index) { means[static_cast<size_t>(index)] = head_chunk_means(c, o, index, Ls, all, Ns); });
        const auto save = [&](int index) { return flatten_means(means[static_cast<size_t>(index)]); };
        if (!exchange_records(
                o.slice, chunk_stage(N_first), heads, save, [](int, const std::vector<double>&) { return true; }, error))
            return false;
    }
}

}  // namespace

// Algorithm 3: for each L, the smallest N at which a two-sample KS test of the per-head mean
// d_A against the per-head mean E[d_A] no longer rejects. N is searched upwards in chunks, and
// every chunk's per-query values serve every L at once (the per-L means are means over the
// first L queries). An L drops out of the search once its N* is found. A merge runs the same
// search on the means its shards computed.
bool run_critical_n(const AttentionCapture& c, const ExperimentOptions& o, ExperimentResult& out, std::string& error,
                    const ExperimentProgress& progress) {
    const int heads = heads_of(c);
    std::vector<int> Ls = o.Ls;
    std::sort(Ls.begin(), Ls.end());
    if (!builds_tables(o.slice)) return critical_n_shard(c, o, Ls, error, progress);
    std::vector<int> n_star(Ls.size(), 0);  // 0 = not found (yet)
    std::vector<KsResult> at_star(Ls.size(), KsResult{0, 0, false});
    Table scan{"critical_n_scan", {"L", "N", "D", "p_value", "exact", "rejected"}, {}};
    Table per_head{"critical_n_heads", {"layer", "head", "L", "N", "queries", "d_A_mean", "expected_A_mean"}, {}};

    auto open_Ls = [&]() {
        std::vector<size_t> idx;
        for (size_t i = 0; i < Ls.size(); ++i)
            if (!n_star[i] && Ls[i] - 1 >= 1) idx.push_back(i);
        return idx;
    };
    long long done = 0;
    int N_first = 1;
    for (std::vector<size_t> open = open_Ls(); !open.empty(); open = open_Ls()) {
        // The largest N still worth trying: an L needs N <= L - 1, and we stop at critical_max_n.
        const std::vector<int> Ns = chunk_Ns(N_first, Ls[open.back()], o.critical_max_n);
        if (Ns.empty()) break;
        std::vector<char> is_open(Ls.size(), 0);
        for (size_t i : open) is_open[i] = 1;

        // means[index][i][k]: head index's mean over the first Ls[i] queries, for Ns[k].
        std::vector<ChunkMeans> means(static_cast<size_t>(heads));
        const long long total = done + heads;
        for_each_head(o.slice, heads, progress, done, total, "critical-n, N " + std::to_string(N_first) + ".." + std::to_string(Ns.back()),
                      [&](int index) { means[static_cast<size_t>(index)] = head_chunk_means(c, o, index, Ls, is_open, Ns); });
        const auto load = [&](int index, const std::vector<double>& r) {
            return unflatten_means(r, Ls.size(), Ns.size(), means[static_cast<size_t>(index)]);
        };
        if (!exchange_records(
                o.slice, chunk_stage(N_first), heads, [](int) { return std::vector<double>{}; }, load, error))
            return false;
        for (size_t i : open) {
            const int L = Ls[i];
            for (size_t k = 0; k < Ns.size() && Ns[k] < L; ++k) {
                std::vector<double> d(static_cast<size_t>(heads)), e(static_cast<size_t>(heads));
                for (int index = 0; index < heads; ++index) {
                    const auto& m = means[static_cast<size_t>(index)][i][k];
                    d[static_cast<size_t>(index)] = m[1];
                    e[static_cast<size_t>(index)] = m[2];
                    per_head.rows.push_back(
                        {double(index / c.n_head()), double(index % c.n_head()), double(L), double(Ns[k]), m[0], m[1], m[2]});
                }
                KsResult ks;
                if (!ks_two_sample(d, e, ks, error)) {
                    error = "critical-n at L = " + std::to_string(L) + ", N = " + std::to_string(Ns[k]) + ": " + error;
                    return false;
                }
                const bool rejected = ks.p_value < o.ks_level;
                scan.rows.push_back({double(L), double(Ns[k]), ks.statistic, ks.p_value, ks.exact ? 1.0 : 0.0, rejected ? 1.0 : 0.0});
                if (!rejected && !n_star[i]) {
                    n_star[i] = Ns[k];
                    at_star[i] = ks;
                }
                out.queries_used += static_cast<long long>(heads) * (L - Ns[k]);
                out.queries_skipped += static_cast<long long>(heads) * Ns[k];
            }
        }
        N_first = Ns.back() + 1;
    }

    Table summary{"critical_n", {"L", "N_star", "found", "N_star_over_L", "D", "p_value", "exact"}, {}};
    for (size_t i = 0; i < Ls.size(); ++i) {
        const bool found = n_star[i] > 0;
        summary.rows.push_back({double(Ls[i]), found ? double(n_star[i]) : std::nan(""), found ? 1.0 : 0.0,
                                found ? double(n_star[i]) / Ls[i] : std::nan(""), found ? at_star[i].statistic : std::nan(""),
                                found ? at_star[i].p_value : std::nan(""), found && at_star[i].exact ? 1.0 : 0.0});
        if (!found)
            out.notes.push_back("L = " + std::to_string(Ls[i]) + ": the KS test still rejects at every N up to " +
                                std::to_string(std::min(Ls[i] - 1, o.critical_max_n)));
    }
    out.notes.push_back("N* is the smallest N where the KS test of " + std::to_string(heads) +
                        " per-head mean d_A against per-head mean E[d_A] does not reject at level " + std::to_string(o.ks_level));
    out.tables.push_back(std::move(summary));
    out.tables.push_back(std::move(scan));
    out.tables.push_back(std::move(per_head));
    return true;
}

}  // namespace attnlab
