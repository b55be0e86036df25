#include "app/work/head_summaries.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/normalizers.h"
#include "analysis/separability.h"
#include "analysis/softmax.h"
#include "analysis/softmax_sweeps.h"
#include "base/random.h"
#include "base/timing.h"

namespace attnlab {

HeadVectors head_vectors(const ForwardResult& forward, int layer, int head) {
    const AttentionCapture& cap = forward.capture;
    HeadVectors h;
    h.layer = layer;
    h.head = head;
    h.tokens = cap.length();
    h.dim = cap.head_dim();
    h.q = cap.queries(layer, head);
    h.k = cap.keys(layer, head);
    const std::vector<float> v = cap.values(layer, head);
    h.values.resize(h.tokens, h.dim);
    for (int t = 0; t < h.tokens; ++t)
        for (int c = 0; c < h.dim; ++c) h.values(t, c) = v[static_cast<size_t>(t) * h.dim + c];
    return h;
}

std::vector<double> HeadVectors::logits(int t) const {
    const float* qrow = q.data() + static_cast<size_t>(t) * dim;
    const double scale = 1.0 / std::sqrt(static_cast<double>(dim));
    std::vector<double> out(static_cast<size_t>(t) + 1);
    for (int j = 0; j <= t; ++j) {
        const float* krow = k.data() + static_cast<size_t>(j) * dim;
        double dot = 0.0;
        for (int c = 0; c < dim; ++c) dot += static_cast<double>(qrow[c]) * krow[c];
        out[static_cast<size_t>(j)] = dot * scale;
    }
    return out;
}

std::vector<int> spaced_queries(int T, int count) {
    std::vector<int> out;
    if (T < 2 || count < 1) return out;
    if (count >= T - 1 || count == 1) {
        for (int t = count == 1 ? T - 1 : 1; t < T; ++t) out.push_back(t);
        return out;
    }
    for (int k = 0; k < count; ++k) {
        const int t = 1 + static_cast<int>(std::lround(static_cast<double>(k) * (T - 2) / (count - 1)));
        if (out.empty() || t != out.back()) out.push_back(t);
    }
    return out;
}

size_t nearest_index(const std::vector<int>& grid, int N) {
    size_t best = 0;
    for (size_t i = 1; i < grid.size(); ++i)
        if (std::abs(grid[i] - N) < std::abs(grid[best] - N)) best = i;
    return best;
}

namespace {

// What keeps the summaries affordable in the single-threaded page at L = 1024 x 144 heads
// (about 4x slower than native): 64 evenly spaced queries per head (32 above 512 tokens, where
// each costs four times as much), 4 Monte Carlo subsets per query (as `attnlab experiment`'s
// critical-N search), and N up to 128 for the KS search (the paper finds N* ~ 0.06 L, 61 at
// L = 1024). Measured natively, one thread: 2.9 s at L = 256, 11 s at L = 1024.
int query_count(int T) { return T > 512 ? 32 : 64; }
constexpr int kSamples = 4;
constexpr int kMaxDistanceN = 128;
constexpr int kGramBlock = 64;      // rows of the Gram matrix per unit of work
constexpr double kStepMs = 6.0;     // a step runs units until this much time has passed
constexpr std::uint64_t kSeed = 0;  // as `attnlab experiment` with its default seed

std::vector<int> separability_grid(int T) {
    std::vector<int> g;
    for (int N = 1; N <= std::min(64, T - 1); ++N) g.push_back(N);
    return g;
}

// Sums for means over queries.
struct Mean {
    double sum = 0;
    long long n = 0;
    void add(double v) {
        sum += v;
        ++n;
    }
    double value() const { return n ? sum / static_cast<double>(n) : std::nan(""); }
};

class SummaryTask final : public Task {
public:
    explicit SummaryTask(std::shared_ptr<const ForwardResult> forward) : forward_(std::move(forward)) {
        const AttentionCapture& cap = forward_->capture;
        HeadSummaries& o = out_;
        o.source = forward_.get();
        o.pass = forward_;
        o.tokens = cap.length();
        o.queries = spaced_queries(o.tokens, query_count(o.tokens));
        o.samples = kSamples;
        o.distance_Ns = distance_grid(o.tokens);
        o.separability_Ns = separability_grid(o.tokens);
        o.temperatures = log_grid(1e-3, 1e2, 26);
        o.eps = {1e-3, 1e-1, 10.0};
        heads_ = cap.layers() * cap.n_head();
        o.heads.resize(static_cast<size_t>(heads_));
    }

    bool step() override {
        const auto start = SteadyClock::now();
        while (head_ < heads_) {
            unit();
            const int units = gram_units() + static_cast<int>(out_.queries.size());
            report_progress((head_ + std::min(1.0, static_cast<double>(done_units_) / units)) / heads_);
            if (ms_since(start) > kStepMs) break;
        }
        return head_ < heads_;
    }

    void finish(Session& session) override {
        HeadSummaries& o = out_;
        std::vector<std::vector<double>> d(o.distance_Ns.size()), e(o.distance_Ns.size());
        for (size_t k = 0; k < o.distance_Ns.size(); ++k)
            for (const HeadSummary& h : o.heads) {
                if (!h.error.empty()) continue;
                d[k].push_back(h.d_A[k]);
                e[k].push_back(h.expected_A[k]);
            }
        std::string error;
        if (!critical_n(o.distance_Ns, d, e, o.ks_level, o.critical, error)) o.error = error;
        for (const HeadSummary& h : o.heads)
            if (!h.error.empty() && o.error.empty())
                o.error = "layer " + std::to_string(h.layer) + " head " + std::to_string(h.head) + ": " + h.error;
        o.seconds = seconds_since(started_);
        o.complete = true;
        session.summaries = std::make_shared<const HeadSummaries>(std::move(o));
    }

private:
    // The Gram matrix's blocks (none beyond kWholeGramTokens: the queries then read rows of it
    // computed as needed), then the unit-sphere rows.
    bool whole_gram() const { return out_.tokens <= kWholeGramTokens; }
    int gram_units() const { return (whole_gram() ? (out_.tokens + kGramBlock - 1) / kGramBlock : 0) + 1; }

    // One unit of work on the current head: a block of its Gram matrix, the unit-sphere Gram
    // matrix, or one query.
    void unit() {
        const AttentionCapture& cap = forward_->capture;
        const int T = out_.tokens;
        if (done_units_ == 0) {
            hv_ = head_vectors(*forward_, head_ / cap.n_head(), head_ % cap.n_head());
            if (whole_gram()) gram_.resize(T, T);
            start_head();
        }
        const int blocks = gram_units() - 1;
        if (done_units_ < blocks) {  // G = x x^T, kGramBlock rows at a time: (rows, T)
            const int r0 = done_units_ * kGramBlock, rows = std::min(kGramBlock, T - r0);
            gram_.middleRows(r0, rows).noalias() = hv_.values.middleRows(r0, rows) * hv_.values.transpose();
        } else if (done_units_ == blocks) {  // the same on the unit sphere: G_ij / (|x_i| |x_j|)
            std::string error;
            if (!normalize_rows(hv_.values, 1.0, unit_, error)) {
                summary().error = error;
                next_head();
                return;
            }
            if (whole_gram()) {
                const Eigen::VectorXd inv = gram_.diagonal().cwiseSqrt().cwiseInverse();
                unit_gram_ = inv.asDiagonal() * gram_ * inv.asDiagonal();
            }
        } else {
            query(out_.queries[static_cast<size_t>(done_units_ - blocks - 1)]);
        }
        if (++done_units_ == gram_units() + static_cast<int>(out_.queries.size())) end_head();
    }

    HeadSummary& summary() { return out_.heads[static_cast<size_t>(head_)]; }

    void start_head() {
        const size_t nd = out_.distance_Ns.size(), ns = out_.separability_Ns.size();
        const size_t nt = out_.temperatures.size(), ne = out_.eps.size();
        d_A_.assign(nd, {});
        d_B_.assign(nd, {});
        e_A_.assign(nd, {});
        e_B_.assign(nd, {});
        ratio_.assign(ns, {});
        lower_.assign(ns, {});
        upper_.assign(ns, {});
        jac_.assign(nt, {});
        g_.assign(nt * ne, {});
    }

    void query(int t) {
        const std::vector<double> l = hv_.logits(t);
        // The weights the head ran in this pass: its plan entry (softmax at T = 1 as trained).
        const HeadPlan& how = forward_->plan.at(hv_.layer, hv_.head);
        const std::vector<double> w = how.is_default() ? softmax(l, 1.0) : normalize(how.normalizer, l, how.temperature);
        const auto index = static_cast<std::uint64_t>(head_);
        const auto x = hv_.values.topRows(t + 1);

        std::vector<int> valid;
        for (int N : out_.distance_Ns)
            if (N <= t) valid.push_back(N);
        if (!valid.empty()) {
            DistanceOptions options;
            options.samples = kSamples;
            options.seed = derive_seed(kSeed, index, static_cast<std::uint64_t>(t), 1);
            options.bounds = false;
            options.approx = false;
            const GramRows rows = whole_gram() ? GramRows(gram_) : GramRows::computed_from(x);
            const std::vector<SelectionDistance> r = selection_distances(w, x, valid, options, &rows);
            for (size_t k = 0; k < r.size(); ++k) {  // valid is a prefix of distance_Ns
                d_A_[k].add(r[k].d_A);
                d_B_[k].add(r[k].d_B);
                e_A_[k].add(r[k].expected_A);
                e_B_[k].add(r[k].expected_B);
            }
        }

        valid.clear();
        for (int N : out_.separability_Ns)
            if (N <= t) valid.push_back(N);
        if (!valid.empty()) {
            const auto unit = unit_.topRows(t + 1);
            const GramRows rows = whole_gram() ? GramRows(unit_gram_) : GramRows::computed_from(unit);
            const std::vector<Separability> r = separability(w, unit, valid, 1.0, &rows);
            for (size_t k = 0; k < r.size(); ++k) {
                ratio_[k].add(r[k].ratio);
                if (std::isfinite(r[k].lower)) lower_[k].add(r[k].lower);
                upper_[k].add(r[k].upper);
            }
        }

        const std::vector<double> v = random_unit_vector(t + 1, derive_seed(kSeed, index, static_cast<std::uint64_t>(t), 5));
        const size_t ne = out_.eps.size();
        for (size_t i = 0; i < out_.temperatures.size(); ++i) {
            const double temp = out_.temperatures[i];
            const std::vector<double> base = softmax(l, temp);
            jac_[i].add(softmax_jacobian_norm(base, temp));
            for (size_t e = 0; e < ne; ++e) g_[i * ne + e].add(finite_difference_sensitivity(l, base, v, temp, out_.eps[e]));
        }
    }

    void end_head() {
        HeadSummary& h = summary();
        h.layer = hv_.layer;
        h.head = hv_.head;
        const auto means = [](const std::vector<Mean>& m) {
            std::vector<double> out;
            for (const Mean& x : m) out.push_back(x.value());
            return out;
        };
        h.d_A = means(d_A_);
        h.d_B = means(d_B_);
        h.expected_A = means(e_A_);
        h.expected_B = means(e_B_);
        h.ratio = means(ratio_);
        h.lower = means(lower_);
        h.upper = means(upper_);
        h.jacobian = means(jac_);
        h.g = means(g_);
        next_head();
    }

    void next_head() {
        HeadSummary& h = summary();
        h.layer = hv_.layer;
        h.head = hv_.head;
        ++head_;
        done_units_ = 0;
    }

    std::shared_ptr<const ForwardResult> forward_;
    HeadSummaries out_;
    int heads_ = 0, head_ = 0, done_units_ = 0;
    // The current head.
    HeadVectors hv_;
    RowMatrixXd gram_, unit_, unit_gram_;  // (T, T), (T, d), (T, T); the Gram matrices only up to kWholeGramTokens
    std::vector<Mean> d_A_, d_B_, e_A_, e_B_, ratio_, lower_, upper_, jac_, g_;
    SteadyClock::time_point started_ = SteadyClock::now();
};

}  // namespace

std::vector<int> distance_grid(int T) {
    std::vector<int> g;
    for (int N = 1; N <= 16; ++N) g.push_back(N);
    for (int N : {20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128}) g.push_back(N);
    std::erase_if(g, [&](int N) { return N > T - 1 || N > kMaxDistanceN; });
    return g;
}

void keep_summaries_current(Session& s) {
    if (!s.forward || s.forward->tokens.size() < 2) {
        if (s.summaries) {
            s.background.cancel();
            s.summaries.reset();
        }
        return;
    }
    if (!pass_current(s)) {
        // Unfinished summaries of a pass being replaced: dropped, and begun again should the text
        // come back to it before the new pass ends.
        if (s.summaries && !s.summaries->complete && s.background.busy()) {
            s.background.cancel();
            s.summaries.reset();
        }
        return;
    }
    if (s.summaries && s.summaries->pass.lock() == s.forward) return;  // done, running or cancelled
    auto placeholder = std::make_shared<HeadSummaries>();
    placeholder->source = s.forward.get();
    placeholder->pass = s.forward;
    s.summaries = placeholder;
    s.background.start(std::make_unique<SummaryTask>(s.forward), "All-heads summaries (panels 3-5)");
}

}  // namespace attnlab
