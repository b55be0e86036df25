// attnlab analyze: the paper's per-query quantities for attention brought from anywhere.
#include <cmath>
#include <cstdio>
#include <string>

#include "analysis/query_analysis.h"
#include "main/cli/cli_args.h"
#include "main/cli/cli_commands.h"
#include "platform/whole_file.h"

namespace attnlab {

namespace {

int fail(const std::string& message, int code = 1) {
    std::fprintf(stderr, "attnlab analyze: %s\n", message.c_str());
    return code;
}

void print_report(const QueryReport& r) {
    const QueryInput& in = r.input;
    const SelectionDistance& d = r.distance;
    const Separability& s = r.separability;
    std::printf("one query: L = %zu tokens, d = %lld, N = %d, T = %g, normalizer %s\n", in.logits.size(),
                static_cast<long long>(in.vectors.cols()), in.N, in.T, normalizer_name(in.normalizer).c_str());
    std::printf("selected (top-%d, largest weight first):", in.N);
    for (int i : r.selected) std::printf(" %d (%.4g)", i, r.weights[static_cast<size_t>(i)]);
    std::printf("\n  weight carried by the selection abar = %.6g\n\n", d.abar);
    std::printf("Theorem 1: distance of the tokens left out from the selection\n");
    std::printf("  d_A (sum of norms)         %14.6g   bound_A (R) %14.6g\n", d.d_A, d.bound_A);
    std::printf("  d_B (norm of the sum)      %14.6g   bound_B (R) %14.6g\n", d.d_B, d.bound_B);
    std::printf("  E[d_A], random N-subsets   %14.6g   +- %.3g (se, %d samples)\n", d.expected_A, d.expected_A_se, in.samples);
    std::printf("  paper's main term (R)      %14.6g\n", d.approx_A);
    std::printf("  sum_i ||alpha_i x_i||      %14.6g   (Corollary 2: E[d] as L grows)\n\n", r.sum_weighted_norms);
    std::printf("Theorem 2: separability on the sphere of radius %g\n", in.M);
    std::printf("  r = %.6g, N_s = %d of %d (ratio %.4g)", s.r, s.N_s, in.N, s.ratio);
    if (in.N >= 2) std::printf(", delta = %.6g", s.delta);
    std::printf("\n  bounds on E[N_s]/N (R): lower %.4g, upper %.4g\n\n", s.lower, s.upper);
    std::printf("Lemma 2: sensitivity to the logits\n");
    std::printf("  exact ||J||_2 = %.6g; softmax bounds: paper min{1/(4T), sqrt 2} = %.6g (check), tight 1/(2T) = %.6g\n", r.jacobian_norm,
                r.bound_paper, r.bound_tight);
    for (const SensitivityPoint& p : r.sensitivity)
        std::printf("  g(T, eps = %g) = %.6g   (bound min{1/(2T), sqrt 2/eps} = %.6g)\n", p.eps, p.g, p.bound);
    if (r.lemma1_a)
        std::printf("Lemma 1: with a = max|l| = %.6g every weight lies in [%.6g, %.6g]\n", *r.lemma1_a, *r.lemma1_lower, *r.lemma1_upper);
}

}  // namespace

int cli_analyze(int argc, char** argv, int first) {
    CliArgs args;
    std::string error;
    if (!args.parse(argc, argv, first, {"input"}, {"json"}, error)) return fail(error, 2);
    if (!args.value("input")) return fail("--input FILE.json is required (see docs/science.md for its format)", 2);
    const std::string path = *args.value("input");
    std::string text;
    if (!read_whole_file(path, text, error)) return fail(error);
    QueryInput input;
    if (!parse_query_input(text, input, error)) return fail(path + ": " + error);
    QueryReport report;
    if (!analyze_query(input, report, error)) return fail(path + ": " + error);
    if (args.flag("json")) std::printf("%s\n", query_report_json(report).c_str());
    else print_report(report);
    return 0;
}

}  // namespace attnlab
