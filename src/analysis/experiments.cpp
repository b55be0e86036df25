#include "analysis/experiments.h"

#include <algorithm>
#include <cmath>

#include "analysis/experiment_heads.h"
#include "analysis/softmax_sweeps.h"

namespace attnlab {

const char* experiment_name(ExperimentKind kind) {
    switch (kind) {
        case ExperimentKind::DistanceVsL: return "distance-vs-L";
        case ExperimentKind::DistanceVsN: return "distance-vs-N";
        case ExperimentKind::CriticalN: return "critical-n";
        case ExperimentKind::Separability: return "separability";
        case ExperimentKind::Gradient: return "gradient";
    }
    return "?";
}

bool parse_experiment_name(std::string_view name, ExperimentKind& out, std::string& error) {
    for (ExperimentKind k : kAllExperiments) {
        if (name == experiment_name(k)) {
            out = k;
            return true;
        }
    }
    error = "unknown experiment '" + std::string(name) + "' (distance-vs-L, distance-vs-N, critical-n, separability, gradient or all)";
    return false;
}

ExperimentOptions paper_sweeps(int tokens) {
    ExperimentOptions o;
    for (int L = 32; L <= std::min(tokens, 1024); L += 32) o.Ls.push_back(L);
    if (o.Ls.empty()) o.Ls.push_back(tokens);  // a text shorter than the paper's first L
    for (int N : {1, 5, 10, 20, 100})
        if (N < tokens) o.Ns.push_back(N);
    for (int N = 1; N <= 64 && N < tokens; ++N) o.separability_Ns.push_back(N);
    o.temperatures = log_grid(1e-3, 1e2, 26);
    return o;
}

HeadInputs head_inputs(const AttentionCapture& capture, int layer, int head, bool residual_vectors) {
    HeadInputs h;
    h.layer = layer;
    h.head = head;
    h.index = layer * capture.n_head() + head;
    h.T = capture.length();
    h.scores = capture.scores(layer, head);
    if (residual_vectors) {
        const std::vector<float>& r = capture.residual(layer);  // (T, C)
        h.x = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(r.data(), h.T, capture.width())
                  .cast<double>();
    } else {
        const std::vector<float> v = capture.values(layer, head);  // (T, d_head)
        h.x = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(v.data(), h.T, capture.head_dim())
                  .cast<double>();
    }
    return h;
}

namespace {

bool check_sizes(std::string_view what, const std::vector<int>& values, int lo, int hi, std::string& error) {
    if (values.empty()) {
        error = std::string(what) + " is empty (a text this short leaves nothing to sweep?)";
        return false;
    }
    for (int v : values) {
        if (v < lo || v > hi) {
            error = std::string(what) + " has " + std::to_string(v) + ", outside " + std::to_string(lo) + ".." + std::to_string(hi) +
                    " for this text";
            return false;
        }
    }
    return true;
}

bool check_options(ExperimentKind kind, const AttentionCapture& c, const ExperimentOptions& o, std::string& error) {
    const int T = c.length();
    if (T < 2 || c.layers() == 0) {
        error = "the text must have at least 2 tokens, and the model at least one layer";
        return false;
    }
    if (o.residual_vectors && c.residual(0).empty()) {
        error = "residual vectors were asked for but not captured";
        return false;
    }
    switch (kind) {
        case ExperimentKind::DistanceVsL:
            if (o.N < 1 || o.N >= T) {
                error = "N = " + std::to_string(o.N) + " must be from 1 to " + std::to_string(T - 1);
                return false;
            }
            return check_sizes("the L sweep", o.Ls, o.N + 1, T, error) && (o.samples >= 1 || (error = "samples must be >= 1", false));
        case ExperimentKind::DistanceVsN:
            return check_sizes("the N sweep", o.Ns, 1, T - 1, error) && (o.samples >= 1 || (error = "samples must be >= 1", false));
        case ExperimentKind::CriticalN:
            if (!(o.ks_level > 0.0 && o.ks_level < 1.0)) {
                error = "the KS level must be in (0, 1)";
                return false;
            }
            return check_sizes("the L sweep", o.Ls, 2, T, error) && (o.critical_samples >= 1 || (error = "samples must be >= 1", false));
        case ExperimentKind::Separability:
            if (!(o.M > 0.0) || !std::isfinite(o.M)) {
                error = "M must be a finite number > 0";
                return false;
            }
            return check_sizes("the separability N sweep", o.separability_Ns, 1, T - 1, error);
        case ExperimentKind::Gradient:
            if (o.temperatures.empty() || o.eps.empty()) {
                error = "the gradient experiment needs at least one temperature and one eps";
                return false;
            }
            for (double t : o.temperatures)
                if (!(t > 0.0) || !std::isfinite(t)) {
                    error = "temperatures must be finite and > 0";
                    return false;
                }
            for (double e : o.eps)
                if (!(e > 0.0) || !std::isfinite(e)) {
                    error = "eps values must be finite and > 0";
                    return false;
                }
            return true;
    }
    return true;
}

}  // namespace

bool run_experiment(ExperimentKind kind, const AttentionCapture& capture, const ExperimentOptions& options, ExperimentResult& out,
                    std::string& error, const ExperimentProgress& progress) {
    if (!check_options(kind, capture, options, error)) return false;
    out = ExperimentResult{};
    out.kind = kind;
    out.notes.push_back(std::string("vectors x: ") +
                        (options.residual_vectors ? "the layer's input residual stream" : "the head's value vectors"));
    // The labels PAPER.md gives each formula, carried into every summary (docs/science.md §9).
    switch (kind) {
        case ExperimentKind::DistanceVsL:
        case ExperimentKind::DistanceVsN:
            out.notes.push_back(
                "(R) bound_A and bound_B are reconstructed from the paper's proof; approx_A is the paper's main-term "
                "approximation of E[d_A] (R), without its Jensen-gap term; d_A is reading A (sum of norms), d_B reading B "
                "(norm of the sum)");
            break;
        case ExperimentKind::Separability:
            out.notes.push_back("(R) lower and upper are the Theorem 2 bounds on E[N_s]/N as reconstructed from the paper's proof");
            break;
        case ExperimentKind::Gradient:
            out.notes.push_back(
                "(check) bound_paper = min{1/(4T), sqrt 2} is the paper's Lemma 2 bound, which the exact ||J||_2 exceeds; "
                "bound_tight = 1/(2T) is the tight bound; bound_g = min{1/(2T), sqrt 2/eps} bounds g");
            break;
        case ExperimentKind::CriticalN: break;
    }
    switch (kind) {
        case ExperimentKind::DistanceVsL: return run_distance_vs_L(capture, options, out, error, progress);
        case ExperimentKind::DistanceVsN: return run_distance_vs_N(capture, options, out, error, progress);
        case ExperimentKind::CriticalN: return run_critical_n(capture, options, out, error, progress);
        case ExperimentKind::Separability: return run_separability(capture, options, out, error, progress);
        case ExperimentKind::Gradient: return run_gradient(capture, options, out, error, progress);
    }
    return false;
}

}  // namespace attnlab
