#include "analysis/query_analysis.h"

#include <cmath>
#include <set>

#include "analysis/softmax.h"
#include "base/json.h"
#include "base/random.h"

namespace attnlab {

namespace {

bool finite_number(const json::Value& v, std::string_view what, double& out, std::string& error) {
    if (!v.is_number()) {
        error = std::string(what) + " must be a number, not " + json::Value::type_name(v.type());
        return false;
    }
    out = v.as_number();
    if (!std::isfinite(out)) {
        error = std::string(what) + " is not a finite number (" + v.as_string() + ")";
        return false;
    }
    return true;
}

bool number_array(const json::Value& v, std::string_view what, std::vector<double>& out, std::string& error) {
    if (!v.is_array()) {
        error = std::string(what) + " must be an array of numbers, not " + json::Value::type_name(v.type());
        return false;
    }
    out.resize(v.items().size());
    for (size_t i = 0; i < out.size(); ++i)
        if (!finite_number(v.items()[i], std::string(what) + "[" + std::to_string(i) + "]", out[i], error)) return false;
    return true;
}

const std::set<std::string_view> kKeys = {"logits", "vectors", "N", "T", "normalizer", "alpha", "s", "seed", "samples", "M", "eps"};

}  // namespace

bool parse_query_input(std::string_view json_text, QueryInput& out, std::string& error) {
    json::ParseResult parsed = json::parse(json_text);
    if (!parsed.value) {
        error = "not valid JSON: " + parsed.error;
        return false;
    }
    const json::Value& root = *parsed.value;
    if (!root.is_object()) {
        error = std::string("the input must be a JSON object, not ") + json::Value::type_name(root.type());
        return false;
    }
    std::set<std::string_view> seen;
    for (const auto& [key, value] : root.members()) {
        if (!kKeys.count(key)) {
            error = "unknown key \"" + key + "\" (known: logits, vectors, N, T, normalizer, alpha, s, seed, samples, M, eps)";
            return false;
        }
        if (!seen.insert(key).second) {
            error = "key \"" + key + "\" appears twice";
            return false;
        }
    }
    QueryInput in;
    const json::Value* logits = root.find("logits");
    const json::Value* vectors = root.find("vectors");
    const json::Value* N = root.find("N");
    const json::Value* T = root.find("T");
    if (!logits || !vectors || !N || !T) {
        error = std::string("missing \"") +
                (!logits    ? "logits"
                 : !vectors ? "vectors"
                 : !N       ? "N"
                            : "T") +
                "\": the input needs logits, vectors, N and T";
        return false;
    }
    if (!number_array(*logits, "logits", in.logits, error)) return false;
    const size_t L = in.logits.size();
    if (L < 2) {
        error = "logits has " + std::to_string(L) + " entries; a selection needs at least 2 tokens";
        return false;
    }
    if (!vectors->is_array()) {
        error = std::string("vectors must be an array of arrays (one per token), not ") + json::Value::type_name(vectors->type());
        return false;
    }
    if (vectors->items().size() != L) {
        error = "vectors has " + std::to_string(vectors->items().size()) + " rows but logits has " + std::to_string(L) +
                " entries: give one vector per token";
        return false;
    }
    std::vector<double> row;
    for (size_t i = 0; i < L; ++i) {
        if (!number_array(vectors->items()[i], "vectors[" + std::to_string(i) + "]", row, error)) return false;
        if (i == 0) {
            if (row.empty()) {
                error = "vectors[0] is empty: vectors need at least one dimension";
                return false;
            }
            in.vectors.resize(static_cast<Eigen::Index>(L), static_cast<Eigen::Index>(row.size()));
        } else if (static_cast<Eigen::Index>(row.size()) != in.vectors.cols()) {
            error = "vectors[" + std::to_string(i) + "] has " + std::to_string(row.size()) + " numbers but vectors[0] has " +
                    std::to_string(in.vectors.cols()) + ": every vector needs the same dimension";
            return false;
        }
        for (size_t c = 0; c < row.size(); ++c) in.vectors(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(c)) = row[c];
    }
    const auto n = N->as_int(1, static_cast<std::int64_t>(L) - 1);
    if (!N->is_number() || !n) {
        error = "N must be a whole number from 1 to L - 1 = " + std::to_string(L - 1) +
                " (the selection leaves at least one token out), got " +
                (N->is_number() ? N->as_string() : json::Value::type_name(N->type()));
        return false;
    }
    in.N = static_cast<int>(*n);
    if (!finite_number(*T, "T", in.T, error)) return false;
    if (!(in.T > 0.0)) {
        error = "T must be > 0, got " + T->as_string();
        return false;
    }
    if (const json::Value* v = root.find("normalizer")) {
        if (!v->is_string()) {
            error = std::string("normalizer must be a string, not ") + json::Value::type_name(v->type());
            return false;
        }
        if (!parse_normalizer(v->as_string(), in.normalizer, error)) return false;
    }
    if (const json::Value* v = root.find("alpha")) {
        if (in.normalizer.kind != NormalizerKind::Entmax) {
            error = "alpha applies only to the entmax normalizers";
            return false;
        }
        if (!finite_number(*v, "alpha", in.normalizer.alpha, error)) return false;
    }
    if (const json::Value* v = root.find("s")) {
        if (in.normalizer.kind != NormalizerKind::Ssmax) {
            error = "s applies only to the ssmax normalizer";
            return false;
        }
        if (!finite_number(*v, "s", in.normalizer.scale, error)) return false;
    }
    if (!check_normalizer_input(in.normalizer, in.logits, in.T, error)) return false;
    if (const json::Value* v = root.find("seed")) {
        const auto seed = v->as_uint64();
        if (!v->is_number() || !seed) {
            error = "seed must be a whole number from 0 to 2^64 - 1";
            return false;
        }
        in.seed = *seed;
    }
    if (const json::Value* v = root.find("samples")) {
        const auto samples = v->as_int(1, 10'000'000);
        if (!v->is_number() || !samples) {
            error = "samples must be a whole number from 1 to 10000000";
            return false;
        }
        in.samples = static_cast<int>(*samples);
    }
    if (const json::Value* v = root.find("M")) {
        if (!finite_number(*v, "M", in.M, error)) return false;
        if (!(in.M > 0.0)) {
            error = "M (the sphere radius) must be > 0";
            return false;
        }
    }
    if (const json::Value* v = root.find("eps")) {
        if (!number_array(*v, "eps", in.eps, error)) return false;
        for (size_t i = 0; i < in.eps.size(); ++i) {
            if (!(in.eps[i] > 0.0)) {
                error = "eps[" + std::to_string(i) + "] must be > 0";
                return false;
            }
        }
    }
    out = std::move(in);
    return true;
}

bool analyze_query(const QueryInput& in, QueryReport& out, std::string& error) {
    QueryReport r;
    r.input = in;
    const int L = static_cast<int>(in.logits.size());
    r.weights = normalize(in.normalizer, in.logits, in.T);
    const std::vector<int> order = selection_order(r.weights);
    r.selected.assign(order.begin(), order.begin() + in.N);

    DistanceOptions options;
    options.samples = in.samples;
    options.seed = in.seed;
    const int Ns[] = {in.N};
    r.distance = selection_distances(r.weights, in.vectors, Ns, options).front();
    r.sum_weighted_norms = sum_weighted_norms(r.weights, in.vectors);

    RowMatrixXd unit;
    if (!normalize_rows(in.vectors, in.M, unit, error)) return false;
    r.separability = separability(r.weights, unit, Ns, in.M).front();

    r.jacobian_norm = normalizer_jacobian_norm(in.normalizer, in.logits, in.T);
    r.bound_paper = jacobian_bound_paper(in.T);
    r.bound_tight = jacobian_bound_tight(in.T);
    if (in.normalizer.kind == NormalizerKind::Softmax) {
        // Lemma 1 and the finite-difference g are statements about softmax itself.
        const double a = max_abs(in.logits);
        const Lemma1Band band = lemma1_band(L, a, in.T);
        r.lemma1_a = a;
        r.lemma1_lower = band.lower;
        r.lemma1_upper = band.upper;
        const std::vector<double> v = random_unit_vector(L, derive_seed(in.seed, 0x67));
        for (double eps : in.eps)
            r.sensitivity.push_back(
                {eps, finite_difference_sensitivity(in.logits, r.weights, v, in.T, eps), sensitivity_bound_tight(in.T, eps)});
    }
    out = std::move(r);
    return true;
}

namespace {

// One sample has no spread to estimate: its standard error is undefined, not 0.
std::string mean_se(double mean, double se, int samples) {
    return json::ObjectBuilder().add("mean", mean).add_raw("se", samples >= 2 ? json::number(se) : "null").str();
}

}  // namespace

std::string query_report_json(const QueryReport& r) {
    const QueryInput& in = r.input;
    const SelectionDistance& d = r.distance;
    const Separability& s = r.separability;
    json::ObjectBuilder o;
    o.add("L", static_cast<int>(in.logits.size())).add("d", static_cast<int>(in.vectors.cols())).add("N", in.N).add("T", in.T);
    o.add("normalizer", normalizer_name(in.normalizer)).add_raw("seed", std::to_string(in.seed)).add("samples", in.samples).add("M", in.M);
    o.add_raw("weights", json::ArrayBuilder().add_all(r.weights).str())
        .add_raw("selected", json::ArrayBuilder().add_all(std::vector<long long>(r.selected.begin(), r.selected.end())).str());
    o.add("abar", d.abar).add("d_A", d.d_A).add("d_B", d.d_B).add("d_1", d.d_1).add("X", d.X);
    o.add("bound_A", d.bound_A).add("bound_B", d.bound_B);
    o.add_raw("expected_A", mean_se(d.expected_A, d.expected_A_se, in.samples))
        .add_raw("expected_B", mean_se(d.expected_B, d.expected_B_se, in.samples));
    o.add("approx_A", d.approx_A).add("sum_weighted_norms", r.sum_weighted_norms);
    o.add("r", s.r).add("N_s", s.N_s).add("ratio", s.ratio);
    o.add_raw("delta", in.N >= 2 ? json::number(s.delta) : "null");
    o.add_raw("xi", json::ArrayBuilder().add_all(s.xi).str()).add("lower", s.lower).add("upper", s.upper);
    o.add("jacobian_norm", r.jacobian_norm).add("bound_paper", r.bound_paper).add("bound_tight", r.bound_tight);
    if (r.lemma1_a) {
        o.add_raw("lemma1", json::ObjectBuilder().add("a", *r.lemma1_a).add("lower", *r.lemma1_lower).add("upper", *r.lemma1_upper).str());
        json::ArrayBuilder points;
        for (const SensitivityPoint& p : r.sensitivity)
            points.add_raw(json::ObjectBuilder().add("eps", p.eps).add("g", p.g).add("bound", p.bound).str());
        o.add_raw("sensitivity", points.str());
    } else {
        o.add_raw("lemma1", "null").add_raw("sensitivity", "null");
    }
    o.add_raw("labels",
              json::ObjectBuilder()
                  .add("d_A", "reading A: sum of norms over the tokens left out (default)")
                  .add("d_B", "reading B: norm of the sum over the tokens left out")
                  .add("bound_A", "(R) bound on d_A, reconstructed from the paper's proof")
                  .add("bound_B", "(R) bound on d_B, reconstructed from the paper's proof")
                  .add("expected_A", "E[d_A] over uniformly random N-subsets, Monte Carlo mean and standard error")
                  .add("approx_A", "(R) the paper's main-term approximation of E[d_A], without its Jensen-gap term")
                  .add("lower", "(R) Theorem 2 lower bound on E[N_s]/N (Markov + Cauchy-Schwarz)")
                  .add("upper", "(R) Theorem 2 upper bound on E[N_s]/N (Hoeffding)")
                  .add("jacobian_norm", "exact spectral norm of d weights / d logits for this normalizer")
                  .add("bound_paper", "(check) the paper's min{1/(4T), sqrt 2} for softmax; not a valid bound")
                  .add("bound_tight", "tight softmax bound 1/(2T)")
                  .add("sensitivity", "g(T, eps) along a seeded random unit direction, softmax only; bound min{1/(2T), sqrt 2/eps}")
                  .str());
    return o.str();
}

}  // namespace attnlab
