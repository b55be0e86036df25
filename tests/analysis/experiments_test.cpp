// The experiment runner's wiring: its tables must be the per-query analyses, aggregated over
// the right queries of the right head, and must not depend on the thread count. The math of
// the per-query analyses is tested in selection_test.cpp; here it is recomputed through the
// public per-query functions and compared with what the runner wrote.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "analysis/experiments.h"
#include "analysis/ks_test.h"
#include "analysis/selection.h"
#include "analysis/separability.h"
#include "analysis/softmax.h"
#include "base/json.h"
#include "base/parallel.h"
#include "base/random.h"
#include "base/safetensors.h"
#include "model/attention_capture.h"
#include "model/gpt2.h"
#include "platform/whole_file.h"

using namespace attnlab;

namespace {

// The tiny numpy-made checkpoint (2 layers x 4 heads, C = 32, 32 positions), run once over 32
// seeded tokens with Q/K/V and residuals captured.
struct TinyRun {
    std::string bytes;
    SafetensorsReader reader;
    Gpt2Model model;
    AttentionCapture capture{true};

    TinyRun() {
        const std::string dir = std::string(ATTNLAB_FIXTURES_DIR) + "/tiny-f32";
        bytes = read_whole_file(dir + "/model.safetensors");
        std::string error;
        REQUIRE(reader.open({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, "tiny", error));
        Gpt2Config config;
        REQUIRE(parse_gpt2_config(read_whole_file(dir + "/config.json"), "config.json", config, error));
        REQUIRE(model.load(reader, &config, error));
        std::vector<int> tokens(static_cast<size_t>(config.n_positions));
        SplitMix64 rng(7);
        for (int& t : tokens) t = static_cast<int>(rng.next() % static_cast<std::uint64_t>(config.vocab_size));
        Gpt2State state(model);
        std::vector<float> logits;
        REQUIRE(state.forward(tokens, logits, error, false, &capture));
    }
};

const TinyRun& tiny() {
    static const TinyRun run;
    return run;
}

// Column name -> index, and the row of one (layer, head, sweep value).
struct TableView {
    const Table& t;
    int col(const std::string& name) const {
        const auto it = std::find(t.columns.begin(), t.columns.end(), name);
        REQUIRE(it != t.columns.end());
        return static_cast<int>(it - t.columns.begin());
    }
    const std::vector<double>& row(std::map<std::string, double> key) const {
        for (const auto& r : t.rows) {
            bool match = true;
            for (const auto& [name, value] : key) match = match && r[static_cast<size_t>(col(name))] == value;
            if (match) return r;
        }
        FAIL("no row for the key");
        return t.rows.front();
    }
    double at(const std::vector<double>& r, const std::string& name) const { return r[static_cast<size_t>(col(name))]; }
};

const Table& table(const ExperimentResult& r, const std::string& name) {
    for (const Table& t : r.tables)
        if (t.name == name) return t;
    FAIL("no table " << name);
    return r.tables.front();
}

// Head (layer, head)'s vectors in double, taken from the capture directly.
RowMatrixXd head_values(const AttentionCapture& c, int layer, int head) {
    const std::vector<float> v = c.values(layer, head);
    RowMatrixXd x(c.length(), c.head_dim());
    for (int i = 0; i < x.rows(); ++i)
        for (int j = 0; j < x.cols(); ++j) x(i, j) = v[static_cast<size_t>(i) * c.head_dim() + j];
    return x;
}

// Query row t's weights, from the model's own fp32 softmax (AttentionCapture::weights), not
// from the runner's double softmax of the scores.
std::vector<double> model_weights(const AttentionCapture& c, int layer, int head, int t) {
    const std::vector<float> w = c.weights(layer, head);
    const float* row = w.data() + static_cast<size_t>(t) * c.length();
    return std::vector<double>(row, row + t + 1);
}

}  // namespace

TEST_CASE("experiments: distance-vs-L rows are the per-query distances averaged over the first L queries", "[experiments]") {
    const AttentionCapture& c = tiny().capture;
    ExperimentOptions o = paper_sweeps(c.length());
    o.Ls = {8, 20, 32};
    o.N = 3;
    o.samples = 2;
    ExperimentResult r;
    std::string error;
    REQUIRE(run_experiment(ExperimentKind::DistanceVsL, c, o, r, error));
    const TableView v{table(r, "distance_vs_L")};
    REQUIRE(v.t.rows.size() == static_cast<size_t>(c.layers() * c.n_head()) * o.Ls.size());
    for (int layer : {0, 1})
        for (int head : {0, 3})
            for (int L : o.Ls) {
                const auto& row = v.row({{"layer", layer}, {"head", head}, {"L", L}});
                const RowMatrixXd x = head_values(c, layer, head);
                double d_A = 0, bound_B = 0, approx = 0;
                int n = 0;
                for (int t = o.N; t < L; ++t, ++n) {
                    DistanceOptions d;
                    const int Ns[] = {o.N};
                    const auto q = selection_distances(model_weights(c, layer, head, t), x.topRows(t + 1), Ns, d).front();
                    d_A += q.d_A;
                    bound_B += q.bound_B;
                    approx += q.approx_A;
                }
                CHECK(v.at(row, "queries") == n);
                CHECK(v.at(row, "skipped") == o.N);
                CHECK(v.at(row, "d_A_mean") == Approx(d_A / n).epsilon(1e-5));
                CHECK(v.at(row, "bound_B_mean") == Approx(bound_B / n).epsilon(1e-5));
                CHECK(v.at(row, "approx_A_mean") == Approx(approx / n).epsilon(1e-5));
                CHECK(v.at(row, "d_A_mean") <= v.at(row, "bound_A_mean"));
            }
    CHECK(r.queries_skipped == 8LL * 3 * o.N);
}

TEST_CASE("experiments: residual vectors are the layer's input stream", "[experiments]") {
    const AttentionCapture& c = tiny().capture;
    ExperimentOptions o = paper_sweeps(c.length());
    o.Ns = {2};
    o.samples = 1;
    o.residual_vectors = true;
    ExperimentResult r;
    std::string error;
    REQUIRE(run_experiment(ExperimentKind::DistanceVsN, c, o, r, error));
    const TableView v{table(r, "distance_vs_N")};
    const int layer = 1, head = 2, C = c.width();
    const std::vector<float>& res = c.residual(layer);
    RowMatrixXd x(c.length(), C);
    for (int i = 0; i < x.rows(); ++i)
        for (int j = 0; j < C; ++j) x(i, j) = res[static_cast<size_t>(i) * C + j];
    double d_B = 0;
    int n = 0;
    for (int t = 2; t < c.length(); ++t, ++n) {
        const int Ns[] = {2};
        d_B += selection_distances(model_weights(c, layer, head, t), x.topRows(t + 1), Ns, DistanceOptions{}).front().d_B;
    }
    CHECK(v.at(v.row({{"layer", layer}, {"head", head}, {"N", 2}}), "d_B_mean") == Approx(d_B / n).epsilon(1e-5));
}

TEST_CASE("experiments: separability and gradient rows are per-query means; the summary is the max over heads", "[experiments]") {
    const AttentionCapture& c = tiny().capture;
    ExperimentOptions o = paper_sweeps(c.length());
    o.separability_Ns = {1, 4};
    o.temperatures = {0.01, 1.0};
    ExperimentResult sep, grad;
    std::string error;
    REQUIRE(run_experiment(ExperimentKind::Separability, c, o, sep, error));
    REQUIRE(run_experiment(ExperimentKind::Gradient, c, o, grad, error));

    const TableView s{table(sep, "separability")};
    const int layer = 0, head = 1, N = 4;
    RowMatrixXd unit;
    REQUIRE(normalize_rows(head_values(c, layer, head), 1.0, unit, error));
    double ratio = 0, upper = 0;
    int n = 0;
    for (int t = N; t < c.length(); ++t, ++n) {
        const int Ns[] = {N};
        const Separability q = separability(model_weights(c, layer, head, t), unit.topRows(t + 1), Ns, 1.0).front();
        ratio += q.ratio;
        upper += q.upper;
    }
    const auto& row = s.row({{"layer", layer}, {"head", head}, {"N", N}});
    // N_s counts strict comparisons; fp32 vs fp64 weights could flip a near-tie, so allow one query.
    CHECK(std::abs(s.at(row, "ratio_mean") - ratio / n) <= 1.0 / n + 1e-12);
    CHECK(s.at(row, "upper_mean") == Approx(upper / n).epsilon(1e-4));

    const TableView g{table(grad, "gradient")}, summary{table(grad, "gradient_summary")};
    for (double T : o.temperatures)
        for (double eps : o.eps) {
            double best = 0;
            for (const auto& r : g.t.rows)
                if (g.at(r, "T") == T && g.at(r, "eps") == eps) best = std::max(best, g.at(r, "g_mean"));
            const auto& srow = summary.row({{"T", T}, {"eps", eps}});
            CHECK(summary.at(srow, "g_max_over_heads") == best);
            CHECK(summary.at(srow, "g_max_over_heads") <= summary.at(srow, "bound_g") * (1 + 1e-12));
            CHECK(summary.at(srow, "jacobian_norm_max_over_queries") <= summary.at(srow, "bound_tight") * (1 + 1e-12));
            CHECK(summary.at(srow, "T_paper") == Approx(T * std::sqrt(c.head_dim())));
        }
}

TEST_CASE("experiments: N* is the first N whose KS test of the per-head means does not reject", "[experiments]") {
    const AttentionCapture& c = tiny().capture;
    ExperimentOptions o = paper_sweeps(c.length());
    o.Ls = {12, 32};
    o.critical_samples = 2;
    o.ks_level = 0.2;
    ExperimentResult r;
    std::string error;
    REQUIRE(run_experiment(ExperimentKind::CriticalN, c, o, r, error));
    const TableView summary{table(r, "critical_n")}, scan{table(r, "critical_n_scan")}, heads{table(r, "critical_n_heads")};
    for (int L : o.Ls) {
        double first_kept = std::nan("");
        for (const auto& row : scan.t.rows)
            if (scan.at(row, "L") == L && scan.at(row, "rejected") == 0 && std::isnan(first_kept)) first_kept = scan.at(row, "N");
        const auto& srow = summary.row({{"L", L}});
        if (std::isnan(first_kept)) {
            CHECK(summary.at(srow, "found") == 0);
            continue;
        }
        CHECK(summary.at(srow, "N_star") == first_kept);
        // The KS test again, from the per-head means the runner reported.
        std::vector<double> d, e;
        for (const auto& row : heads.t.rows)
            if (heads.at(row, "L") == L && heads.at(row, "N") == first_kept) {
                d.push_back(heads.at(row, "d_A_mean"));
                e.push_back(heads.at(row, "expected_A_mean"));
            }
        REQUIRE(d.size() == static_cast<size_t>(c.layers() * c.n_head()));
        KsResult ks;
        REQUIRE(ks_two_sample(d, e, ks, error));
        CHECK(summary.at(srow, "D") == ks.statistic);
        CHECK(summary.at(srow, "p_value") == ks.p_value);
        CHECK(ks.p_value >= o.ks_level);
    }
}

TEST_CASE("experiments: identical tables whatever the thread count", "[experiments][threads]") {
    const AttentionCapture& c = tiny().capture;
    ExperimentOptions o = paper_sweeps(c.length());
    o.Ls = {16, 32};
    o.samples = 3;
    o.temperatures = {0.1, 10.0};
    const int before = max_threads();
    for (ExperimentKind kind : kAllExperiments) {
        std::vector<ExperimentResult> runs(2);
        std::string error;
        for (int i = 0; i < 2; ++i) {
            set_max_threads(i == 0 ? 1 : 3);
            if (i > 0) REQUIRE(max_threads() > 1);  // more than one thread ran: the comparison compares something
            REQUIRE(run_experiment(kind, c, o, runs[static_cast<size_t>(i)], error));
        }
        REQUIRE(runs[0].tables.size() == runs[1].tables.size());
        for (size_t t = 0; t < runs[0].tables.size(); ++t) {
            INFO(experiment_name(kind) << " table " << runs[0].tables[t].name);
            const auto& a = runs[0].tables[t].rows;
            const auto& b = runs[1].tables[t].rows;
            REQUIRE(a.size() == b.size());
            bool same = true;
            for (size_t i = 0; i < a.size(); ++i)
                for (size_t j = 0; j < a[i].size(); ++j)
                    same = same && (a[i][j] == b[i][j] || (std::isnan(a[i][j]) && std::isnan(b[i][j])));
            CHECK(same);
        }
    }
    set_max_threads(before);
}

namespace {

// Tables equal bit for bit (NaN equals NaN).
bool same_tables(const ExperimentResult& a, const ExperimentResult& b) {
    if (a.tables.size() != b.tables.size() || a.queries_used != b.queries_used || a.queries_skipped != b.queries_skipped ||
        a.notes != b.notes)
        return false;
    for (size_t t = 0; t < a.tables.size(); ++t) {
        const auto &x = a.tables[t].rows, &y = b.tables[t].rows;
        if (a.tables[t].columns != b.tables[t].columns || x.size() != y.size()) return false;
        for (size_t i = 0; i < x.size(); ++i)
            for (size_t j = 0; j < x[i].size(); ++j)
                if (!(std::isnan(x[i][j]) ? std::isnan(y[i][j]) : std::memcmp(&x[i][j], &y[i][j], sizeof(double)) == 0)) return false;
    }
    return true;
}

}  // namespace

TEST_CASE("experiments: shards over the heads, merged from their records, give the unsharded tables bit for bit", "[experiments][shard]") {
    const AttentionCapture& c = tiny().capture;
    const int heads = c.layers() * c.n_head();
    ExperimentOptions o = paper_sweeps(c.length());
    o.Ls = {8, 16, 32};
    o.samples = 3;
    o.temperatures = {0.1, 10.0};
    o.critical_max_n = 20;
    for (ExperimentKind kind : kAllExperiments) {
        ExperimentResult whole;
        std::string error;
        REQUIRE(run_experiment(kind, c, o, whole, error));
        REQUIRE(!whole.tables.empty());
        for (int n : {1, 3, heads + 2}) {
            INFO(experiment_name(kind) << ", " << n << " shards");
            UnitRecords records;
            bool own_block = true, no_tables = true;
            for (int k = 1; k <= n; ++k) {
                UnitSlice slice;
                slice.first = heads * (k - 1) / n;  // block k of n, computed here, not by ShardSpec
                slice.end = heads * k / n;
                ExperimentOptions shard = o;
                shard.slice = &slice;
                ExperimentResult r;
                REQUIRE(run_experiment(kind, c, shard, r, error));
                no_tables = no_tables && r.tables.empty();
                for (const auto& [key, values] : slice.produced) {
                    own_block = own_block && key.second >= slice.first && key.second < slice.end;
                    records[key] = values;
                }
            }
            CHECK(own_block);
            CHECK(no_tables);
            UnitSlice merge;
            merge.given = &records;
            ExperimentOptions merging = o;
            merging.slice = &merge;
            ExperimentResult merged;
            REQUIRE(run_experiment(kind, c, merging, merged, error));
            CHECK(same_tables(whole, merged));
            if (n == 3) {  // a head's records missing: the merge refuses and says which
                UnitRecords gap = records;
                for (auto it = gap.begin(); it != gap.end();) it = it->first.second == 5 ? gap.erase(it) : std::next(it);
                merge.given = &gap;
                CHECK_FALSE(run_experiment(kind, c, merging, merged, error));
                CHECK(error.find("unit 5") != std::string::npos);
            }
        }
    }
}

TEST_CASE("experiments: impossible options are refused with a message", "[experiments]") {
    const AttentionCapture& c = tiny().capture;
    ExperimentResult r;
    std::string error;
    ExperimentOptions o = paper_sweeps(c.length());
    o.N = c.length();
    CHECK_FALSE(run_experiment(ExperimentKind::DistanceVsL, c, o, r, error));
    CHECK(error.find("N = 32") != std::string::npos);
    o = paper_sweeps(c.length());
    o.Ls = {64};
    CHECK_FALSE(run_experiment(ExperimentKind::CriticalN, c, o, r, error));
    CHECK(error.find("64") != std::string::npos);
    o = paper_sweeps(c.length());
    o.temperatures = {0.0};
    CHECK_FALSE(run_experiment(ExperimentKind::Gradient, c, o, r, error));
    CHECK(error.find("temperatures") != std::string::npos);
    AttentionCapture without_residual;
    o = paper_sweeps(c.length());
    o.residual_vectors = true;
    CHECK_FALSE(run_experiment(ExperimentKind::DistanceVsN, without_residual, o, r, error));
}
