// attnlab experiment normalizer-swap: what a zero-shot swap of the attention normalizer costs a
// trained model (PAPER.md §7's alternatives, run inside the forward pass), on every head at once
// and on one layer at a time. Per plan: perplexity and its ratio to the unmodified model, the mean
// KL(unmodified || swapped) of the next-token distribution, top-1 agreement, and per layer the
// mean attention entropy and largest weight of the weights the heads used.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/parallel.h"
#include "base/timing.h"
#include "main/cli/cli_args.h"
#include "main/cli/cli_checkpoint.h"
#include "main/cli/cli_commands.h"
#include "main/cli/cli_output.h"
#include "main/cli/cli_progress.h"
#include "main/cli/cli_text_nll.h"
#include "main/cli/experiments/cli_shard.h"
#include "model/attention_capture.h"

namespace attnlab {

namespace {

const char* const kHelp =
    "usage: attnlab experiment normalizer-swap --model FILE (--text FILE | --ids 1,2,3) --out DIR [options]\n"
    "\n"
    "Runs the model under these attention plans, each on every head at once (all=X) and on one layer at a\n"
    "time (L.*=X): sparsemax, entmax-1.5, ssmax:0.3, ssmax:0.43, ssmax:1, sa-softmax, softmax@0.5, softmax@2,\n"
    "and softmax@1 on every head as a control. Against the unmodified model it records per plan the\n"
    "perplexity and its ratio, the mean KL(unmodified || swapped) of the next-token distribution and the\n"
    "top-1 agreement over the predicted positions, and per layer the mean entropy and largest weight of the\n"
    "attention the heads used (over every query position and head of the layer).\n"
    "Options:\n"
    "  --attention SPEC   the unmodified model's plan, which the swaps start from (default: the model's own)\n"
    "  --max-tokens n     use at most n tokens of the text (default: the model's context)\n"
    "  --threads n        worker threads (default: all cores); results do not depend on it\n"
    "  --vocab-dir DIR    GPT-2 vocabulary (default: the model folder's tokenizer.json, else assets/gpt2)\n"
    "  --quiet            no progress on stderr\n"
    "  --shard K/N        run the K-th of N contiguous blocks of the plans (the unmodified row goes with 1/N)\n"
    "                     and write DIR/shard.json; `attnlab merge` joins the N folders into this run's files\n"
    "Writes DIR/normalizer_swap.csv (a row per plan), DIR/normalizer_swap_layers.csv (a row per plan and\n"
    "layer) and DIR/normalizer-swap.json; tools/plot_figures.py DIR draws them.\n";

int fail(const std::string& message, int code = 1) { return command_failed("experiment normalizer-swap", message, code); }

// One swap: `setting` (the right side of an item, e.g. "ssmax:0.43") on `heads` ("all" or "L.*").
struct Swap {
    std::string heads, setting;
    int layer = -1;  // -1: every layer
    std::string spec() const { return heads + "=" + setting; }
};

std::vector<Swap> swaps(int n_layer) {
    const char* const settings[] = {"sparsemax", "entmax-1.5", "ssmax:0.3",   "ssmax:0.43",
                                    "ssmax:1",   "sa-softmax", "softmax@0.5", "softmax@2"};
    std::vector<Swap> out{{"all", "softmax@1", -1}};  // the control: the unmodified model when it was trained on softmax
    for (const char* s : settings) {
        out.push_back({"all", s, -1});
        for (int l = 0; l < n_layer; ++l) out.push_back({std::to_string(l) + ".*", s, l});
    }
    return out;
}

// What one pass under a plan gives.
struct PassResult {
    std::vector<float> logits;  // (T, V)
    std::vector<double> nll;    // (T - 1)
    double mean_nll = 0;
    std::vector<double> entropy, max_weight;  // per layer, mean over heads and query positions
};

// Mean over heads and query rows of the entropy (nats) and the largest weight of the weights the
// heads used; per head in parallel, summed in a fixed order.
void attention_summaries(const AttentionCapture& capture, const AttentionPlan& plan, PassResult& r) {
    const int L = capture.layers(), H = capture.n_head(), T = capture.length();
    std::vector<double> entropy(static_cast<size_t>(L * H)), top(static_cast<size_t>(L * H));
    parallel_for(L * H, [&](int item) {
        const int l = item / H, h = item % H;
        const std::vector<float> w = capture.weights(l, h, plan.at(l, h));
        double e = 0, m = 0;
        for (int i = 0; i < T; ++i) {
            const float* row = w.data() + static_cast<size_t>(i) * T;
            double row_entropy = 0;
            for (int j = 0; j <= i; ++j)
                if (row[j] > 0) row_entropy -= static_cast<double>(row[j]) * std::log(static_cast<double>(row[j]));
            e += row_entropy;
            m += *std::max_element(row, row + i + 1);
        }
        entropy[static_cast<size_t>(item)] = e / T;
        top[static_cast<size_t>(item)] = m / T;
    });
    r.entropy.assign(static_cast<size_t>(L), 0.0);
    r.max_weight.assign(static_cast<size_t>(L), 0.0);
    for (int item = 0; item < L * H; ++item) {
        r.entropy[static_cast<size_t>(item / H)] += entropy[static_cast<size_t>(item)] / H;
        r.max_weight[static_cast<size_t>(item / H)] += top[static_cast<size_t>(item)] / H;
    }
}

bool run_pass(const DecoderModel& model, const AttentionPlan& plan, const std::vector<int>& ids, PassResult& r, std::string& error) {
    const std::unique_ptr<DecoderState> state = model.new_state();
    state->attention_plan() = plan;
    AttentionCapture capture;
    FinalResidual output(model.shape().hidden, &capture);
    if (!state->forward(ids, r.logits, error, true, &output)) return false;
    r.mean_nll = mean_next_token_nll(model, output.residual(), ids, r.nll);
    attention_summaries(capture, plan, r);
    return true;
}

// log-softmax of one row of logits, in double.
void log_softmax(const float* logits, int V, std::vector<double>& out) {
    out.resize(static_cast<size_t>(V));
    const double top = *std::max_element(logits, logits + V);
    double sum = 0;
    for (int v = 0; v < V; ++v) sum += std::exp(static_cast<double>(logits[v]) - top);
    const double shift = top + std::log(sum);
    for (int v = 0; v < V; ++v) out[static_cast<size_t>(v)] = static_cast<double>(logits[v]) - shift;
}

// Over the predicted positions 0..T-2: the mean KL(base || swapped) in nats and the fraction of
// positions where both rank the same token first (the first index among equal logits).
void compare_distributions(const PassResult& base, const PassResult& swapped, int T, int V, double& kl_mean, double& top1) {
    const int n = T - 1;
    std::vector<double> kl(static_cast<size_t>(n));
    std::vector<char> same(static_cast<size_t>(n));
    parallel_for(n, [&](int t) {
        const float* p = base.logits.data() + static_cast<size_t>(t) * V;
        const float* q = swapped.logits.data() + static_cast<size_t>(t) * V;
        thread_local std::vector<double> lp, lq;
        log_softmax(p, V, lp);
        log_softmax(q, V, lq);
        double s = 0;
        for (int v = 0; v < V; ++v) s += std::exp(lp[static_cast<size_t>(v)]) * (lp[static_cast<size_t>(v)] - lq[static_cast<size_t>(v)]);
        kl[static_cast<size_t>(t)] = s;
        same[static_cast<size_t>(t)] = std::max_element(p, p + V) - p == std::max_element(q, q + V) - q;
    });
    kl_mean = 0;
    top1 = 0;
    for (int t = 0; t < n; ++t) {
        kl_mean += kl[static_cast<size_t>(t)];
        top1 += same[static_cast<size_t>(t)];
    }
    kl_mean /= n;
    top1 /= n;
}

// The row of normalizer_swap.csv for one plan ("none" = the unmodified model).
std::vector<std::string> plan_row(const Swap& s, const PassResult& r, const PassResult& base, double kl, double top1, int T) {
    const size_t at = s.setting.find('@');
    const double temperature = at == std::string::npos ? 1.0 : std::stod(s.setting.substr(at + 1));
    return {s.heads,
            s.setting,
            s.heads == "none" ? "" : s.spec(),
            std::to_string(s.layer),
            csv_number(temperature),
            std::to_string(T - 1),
            csv_number(r.mean_nll),
            csv_number(std::exp(r.mean_nll)),
            csv_number(std::exp(r.mean_nll - base.mean_nll)),
            csv_number(kl),
            csv_number(top1)};
}

struct SwapRun {
    TextTable plans{
        "normalizer_swap",
        {"heads", "normalizer", "spec", "layer", "T", "tokens", "mean_nll", "perplexity", "perplexity_ratio", "kl_mean", "top1_agreement"},
        {}};
    TextTable layers{"normalizer_swap_layers", {"heads", "normalizer", "layer", "swapped", "entropy_mean", "max_weight_mean"}, {}};
    double seconds = 0;
};

void add_layer_rows(const Swap& s, const PassResult& r, TextTable& t) {
    for (size_t l = 0; l < r.entropy.size(); ++l) {
        const bool swapped = s.heads == "all" || s.layer == static_cast<int>(l);
        t.rows.push_back(
            {s.heads, s.setting, std::to_string(l), swapped ? "1" : "0", csv_number(r.entropy[l]), csv_number(r.max_weight[l])});
    }
}

// The unmodified pass, then one per swap; rows added to run's tables, a line per plan on stdout.
bool run_swaps(const DecoderModel& model, const AttentionPlan& base_plan, const std::vector<int>& ids, bool quiet, const ShardSpec& shard,
               SwapRun& run, PassResult& base, std::string& error) {
    const int T = static_cast<int>(ids.size()), V = model.shape().vocab;
    const auto start = SteadyClock::now();
    if (!run_pass(model, base_plan, ids, base, error)) return false;
    std::printf("%-8s %-12s %12s %10s %12s %8s\n", "heads", "normalizer", "perplexity", "ratio", "KL (nats)", "top-1");
    if (shard.index == 1) {
        const Swap none{"none", "unmodified", -1};
        run.plans.rows.push_back(plan_row(none, base, base, 0.0, 1.0, T));
        add_layer_rows(none, base, run.layers);
        std::printf("%-8s %-12s %12.4f %10.4f %12.6f %8.4f\n", "none", "unmodified", std::exp(base.mean_nll), 1.0, 0.0, 1.0);
    }
    const std::vector<Swap> all = swaps(model.shape().n_layer);
    int first = 0, end = 0;
    shard.range(static_cast<int>(all.size()), first, end);
    ProgressBar bar(quiet);
    for (size_t i = static_cast<size_t>(first); i < static_cast<size_t>(end); ++i) {
        bar.update(static_cast<long long>(i), static_cast<long long>(all.size()), "normalizer-swap: plans");
        AttentionPlan plan = base_plan;
        PassResult r;
        if (!parse_attention_spec(all[i].spec(), model.shape().n_layer, model.shape().n_head, plan, error) ||
            !run_pass(model, plan, ids, r, error)) {
            bar.finish_line();
            error = all[i].spec() + ": " + error;
            return false;
        }
        double kl = 0, top1 = 0;
        compare_distributions(base, r, T, V, kl, top1);
        run.plans.rows.push_back(plan_row(all[i], r, base, kl, top1, T));
        add_layer_rows(all[i], r, run.layers);
        bar.update(static_cast<long long>(i + 1), static_cast<long long>(all.size()), "normalizer-swap: plans");
        bar.finish_line();
        std::printf("%-8s %-12s %12.4f %10.4f %12.6f %8.4f\n", all[i].heads.c_str(), all[i].setting.c_str(), std::exp(r.mean_nll),
                    std::exp(r.mean_nll - base.mean_nll), kl, top1);
        std::fflush(stdout);
    }
    run.seconds = seconds_since(start);
    return true;
}

std::string summary_json(const Checkpoint& ck, const TextInput& in, const AttentionPlan& base_plan, const PassResult& base,
                         const SwapRun& run, const std::vector<std::string>& files) {
    const DecoderShape c = ck.decoder->shape();
    json::ObjectBuilder parameters, baseline, timing;
    std::vector<std::string> specs;
    for (const Swap& s : swaps(c.n_layer)) specs.push_back(s.spec());
    parameters.add("baseline_attention", attention_spec(base_plan)).add_raw("plans", json::ArrayBuilder().add_all(specs).str());
    baseline.add("mean_nll", base.mean_nll)
        .add("perplexity", std::exp(base.mean_nll))
        .add("predicted_tokens", static_cast<int>(in.ids.size()) - 1);
    timing.add("experiment_seconds", run.seconds).add("threads", max_threads());
    const std::vector<std::string> notes = {
        "perplexity = exp(mean over the predicted positions t = 0..T-2 of -ln p(token t+1 | tokens 0..t)); perplexity_ratio = swapped / "
        "unmodified",
        "kl_mean: mean over the predicted positions of KL(unmodified || swapped) of the next-token distribution, in nats",
        "top1_agreement: fraction of the predicted positions where both put the same token first",
        "entropy_mean, max_weight_mean: per layer, over every head and query position of the weights the heads used (query t sees t + 1 "
        "keys)",
        "heads all=X swaps every head, L.*=X the heads of layer L only; all=softmax@1 is the control (the unmodified model when it was "
        "trained on softmax)"};
    json::ObjectBuilder s;
    s.add("experiment", "normalizer-swap")
        .add_raw("parameters", parameters.str())
        .add_raw("model", checkpoint_json(ck))
        .add_raw("text", text_input_json(in))
        .add_raw("baseline", baseline.str())
        .add_raw("notes", json::ArrayBuilder().add_all(notes).str())
        .add_raw("timing", timing.str())
        .add_raw("tables", json::ArrayBuilder().add_all(files).str());
    return s.str();
}

}  // namespace

int cli_normalizer_swap(int argc, char** argv, int first) {
    if (printed_help(argc, argv, first, kHelp)) return 0;
    CliArgs args;
    std::string error;
    if (!args.parse(argc, argv, first, {"model", "text", "ids", "out", "attention", "max-tokens", "threads", "vocab-dir", "shard"},
                    {"quiet"}, error))
        return fail(error, 2);
    for (const char* required : {"model", "out"})
        if (!args.value(required)) return fail(std::string("--") + required + " is required\n" + kHelp, 2);
    std::optional<std::int64_t> threads, max_tokens;
    if (!args.get_int("threads", 1, 1024, threads, error) || !args.get_int("max-tokens", 2, 1 << 30, max_tokens, error))
        return fail(error, 2);
    if (threads) set_max_threads(static_cast<int>(*threads));
    ShardSpec shard;
    if (!read_shard_option(args, shard, error)) return fail(error, 2);
    Checkpoint ck;
    if (!open_checkpoint(*args.value("model"), ck, error)) return fail(error);
    const DecoderShape cfg = ck.decoder->shape();
    AttentionPlan base_plan;
    if (!attention_plan_option(args.value("attention"), *ck.decoder, base_plan, error)) return fail(error, 2);
    TextInput in;
    bool usage = false;
    const int limit = static_cast<int>(std::min<std::int64_t>(cfg.max_positions, max_tokens.value_or(cfg.max_positions)));
    if (!read_text_input(args, *ck.decoder, limit, "experiment normalizer-swap", in, error, usage)) return fail(error, usage ? 2 : 1);
    if (in.ids.size() < 2)
        return fail(in.path + ": the text has " + std::to_string(in.ids.size()) + " token(s); the experiment needs at least 2");
    if (in.cut() > 0)
        std::fprintf(stderr, "attnlab experiment normalizer-swap: %s has %d tokens; using the first %zu, %d cut\n", in.path.c_str(),
                     in.text_tokens, in.ids.size(), in.cut());
    const std::filesystem::path out_dir = *args.value("out");
    if (!make_output_folder(out_dir, error)) return fail(error);

    SwapRun run;
    PassResult base;
    if (!run_swaps(*ck.decoder, base_plan, in.ids, args.flag("quiet"), shard, run, base, error)) return fail(error);
    std::vector<std::string> files;
    for (const TextTable* t : {&run.plans, &run.layers}) {
        if (!write_table(out_dir, *t, error)) return fail(error);
        files.push_back(t->name + ".csv");
    }
    const std::filesystem::path summary = out_dir / "normalizer-swap.json";
    const std::string json_text = summary_json(ck, in, base_plan, base, run, files) + "\n";
    if (!write_text_file(summary, json_text, error)) return fail(error);
    if (shard.given && !write_shard_manifest(out_dir, "normalizer-swap", shard, static_cast<int>(swaps(cfg.n_layer).size()), files,
                                             summary.filename().string(), error))
        return fail(error);
    std::printf("normalizer-swap %.1f s, %zu tokens (%d predicted), %zu plans: %s %s %s\n", run.seconds, in.ids.size(),
                static_cast<int>(in.ids.size()) - 1, run.plans.rows.size(), summary.filename().c_str(), files[0].c_str(), files[1].c_str());
    return 0;
}

}  // namespace attnlab
