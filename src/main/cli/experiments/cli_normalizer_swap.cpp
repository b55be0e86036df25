// attnlab experiment normalizer-swap: what a zero-shot swap of the attention normalizer costs a
// trained model (PAPER.md §7's alternatives, run inside the forward pass), on every head at once
// and on one layer at a time, over the windows of a corpus. Per plan: perplexity and its ratio to
// the unmodified model, the mean KL(unmodified || swapped) of the next-token distribution, top-1
// agreement, and per layer the mean attention entropy and largest weight of the weights the heads
// used; each with a 95% percentile-bootstrap interval over the windows (cli_intervals.h).
//
// The windows are the units of --shard: a window's results under every plan are one record, and
// the tables are built from the records in window order, so that a merge (which reads them from
// the shards) and a one-process run give the same sums, means and intervals bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/parallel.h"
#include "base/sha256.h"
#include "base/timing.h"
#include "main/cli/cli_args.h"
#include "main/cli/cli_checkpoint.h"
#include "main/cli/cli_commands.h"
#include "main/cli/cli_corpus.h"
#include "main/cli/cli_output.h"
#include "main/cli/cli_progress.h"
#include "main/cli/cli_text_nll.h"
#include "main/cli/experiments/cli_intervals.h"
#include "main/cli/experiments/cli_shard.h"
#include "model/attention_capture.h"

namespace attnlab {

namespace {

const char* const kHelp =
    "usage: attnlab experiment normalizer-swap --model FILE (--text FILE... | --ids 1,2,3) --out DIR [options]\n"
    "\n"
    "Runs the model under these attention plans, each on every head at once (all=X) and on one layer at a\n"
    "time (L.*=X): sparsemax, entmax-1.5, ssmax:0.3, ssmax:0.43, ssmax:1, sa-softmax, softmax@0.5, softmax@2,\n"
    "and softmax@1 on every head as a control. Against the unmodified model it records per plan the\n"
    "perplexity and its ratio, the mean KL(unmodified || swapped) of the next-token distribution and the\n"
    "top-1 agreement over the predicted positions, and per layer the mean entropy and largest weight of the\n"
    "attention the heads used (over every query position and head of the layer).\n"
    "The corpus (--text, repeatable: a text file, a folder of .txt files or a JSONL file with a \"text\"\n"
    "field) is cut into windows of --max-tokens tokens, each inside one document; every figure is over all\n"
    "windows, with a 95% interval: a percentile bootstrap that resamples the windows (nan with one window).\n"
    "Options:\n"
    "  --attention SPEC   the unmodified model's plan, which the swaps start from (default: the model's own)\n"
    "  --max-tokens n     the windows' length (default: the model's context); a document's last window may\n"
    "                     be shorter (at least 2 tokens)\n"
    "  --windows n        use the first n windows of the corpus (default: all)\n"
    "  --seed n           the bootstrap's seed (default 0); --resamples n its resamples (default 1000)\n"
    "  --threads n        worker threads (default: all cores); results do not depend on it\n"
    "  --vocab-dir DIR    GPT-2 vocabulary (default: the model folder's tokenizer.json, else assets/gpt2)\n"
    "  --quiet            no progress on stderr\n"
    "  --shard K/N        run the K-th of N contiguous blocks of the windows and write DIR/units.txt (each\n"
    "                     window's sums under every plan) and DIR/shard.json instead of the tables;\n"
    "                     `attnlab merge` joins the N folders into this run's files\n"
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
    double nll_sum = 0;
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

bool run_pass(const DecoderModel& model, const AttentionPlan& plan, std::span<const int> ids, PassResult& r, std::string& error) {
    const std::unique_ptr<DecoderState> state = model.new_state();
    state->attention_plan() = plan;
    AttentionCapture capture;
    FinalResidual output(model.shape().hidden, &capture);
    if (!state->forward(ids, r.logits, error, true, &output)) return false;
    mean_next_token_nll(model, output.residual(), ids, r.nll);
    r.nll_sum = 0;
    for (double v : r.nll) r.nll_sum += v;  // in order, as mean_next_token_nll sums them
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

// Over the predicted positions 0..T-2: the sum of KL(base || swapped) in nats and the number of
// positions where both rank the same token first (the first index among equal logits).
void compare_distributions(const PassResult& base, const PassResult& swapped, int T, int V, double& kl_sum, double& top1) {
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
    kl_sum = 0;
    top1 = 0;
    for (int t = 0; t < n; ++t) {
        kl_sum += kl[static_cast<size_t>(t)];
        top1 += same[static_cast<size_t>(t)];
    }
}

// A window of the corpus: `tokens` consecutive tokens of document `document` from `offset`.
struct Window {
    int document = 0, offset = 0, tokens = 0;
};

// Windows of `length` tokens cut from each document in turn, at offsets 0, length, 2 length, ...;
// a document's last piece is kept when it has at least 2 tokens (one predicted); the first `most`.
std::vector<Window> corpus_windows(const TokenizedCorpus& corpus, int length, int most) {
    std::vector<Window> out;
    for (size_t d = 0; d < corpus.tokens.size(); ++d) {
        const int n = static_cast<int>(corpus.tokens[d].size());
        for (int at = 0; at + 2 <= n && static_cast<int>(out.size()) < most; at += length)
            out.push_back({static_cast<int>(d), at, std::min(length, n - at)});
    }
    return out;
}

// One window under one plan: the sums over its predicted positions, and per layer the means of
// attention_summaries.
struct PlanSums {
    double nll = 0, kl = 0, top1 = 0;
    std::vector<double> entropy, max_weight;
};

// One window under every plan (plan 0: the unmodified model). As a record (a shard's units.txt
// line): predicted, then per plan nll, kl, top1, entropy[layers], max_weight[layers].
struct WindowResult {
    double predicted = 0;
    std::vector<PlanSums> plans;

    std::vector<double> record() const {
        std::vector<double> r = {predicted};
        for (const PlanSums& p : plans) {
            r.insert(r.end(), {p.nll, p.kl, p.top1});
            r.insert(r.end(), p.entropy.begin(), p.entropy.end());
            r.insert(r.end(), p.max_weight.begin(), p.max_weight.end());
        }
        return r;
    }
    bool read(const std::vector<double>& r, size_t n_plans, size_t layers) {
        if (r.size() != 1 + n_plans * (3 + 2 * layers)) return false;
        predicted = r[0];
        plans.assign(n_plans, {});
        const double* v = r.data() + 1;
        for (PlanSums& p : plans) {
            p.nll = v[0], p.kl = v[1], p.top1 = v[2];
            p.entropy.assign(v + 3, v + 3 + layers);
            p.max_weight.assign(v + 3 + layers, v + 3 + 2 * layers);
            v += 3 + 2 * layers;
        }
        return true;
    }
};

// The plans in table order: the unmodified model, then every swap.
struct PlanList {
    std::vector<Swap> swaps;           // swaps[i] is plan i + 1
    std::vector<AttentionPlan> plans;  // plans[0]: the unmodified model's
    size_t size() const { return plans.size(); }
};

bool make_plans(const DecoderShape& c, const AttentionPlan& base_plan, PlanList& out, std::string& error) {
    out.swaps = swaps(c.n_layer);
    out.plans = {base_plan};
    for (const Swap& s : out.swaps) {
        AttentionPlan plan = base_plan;
        if (!parse_attention_spec(s.spec(), c.n_layer, c.n_head, plan, error)) {
            error = s.spec() + ": " + error;
            return false;
        }
        out.plans.push_back(plan);
    }
    return true;
}

bool run_window(const DecoderModel& model, const PlanList& plans, std::span<const int> ids, ProgressBar& bar, long long done,
                long long total, WindowResult& out, std::string& error) {
    const int T = static_cast<int>(ids.size()), V = model.shape().vocab;
    out.predicted = T - 1;
    out.plans.assign(plans.size(), {});
    PassResult base;
    for (size_t p = 0; p < plans.size(); ++p) {
        bar.update(done + static_cast<long long>(p), total, "normalizer-swap: windows x plans");
        PassResult r;
        if (!run_pass(model, plans.plans[p], ids, p == 0 ? base : r, error)) {
            if (p > 0) error = plans.swaps[p - 1].spec() + ": " + error;
            return false;
        }
        const PassResult& mine = p == 0 ? base : r;
        PlanSums& s = out.plans[p];
        s.nll = mine.nll_sum;
        if (p > 0) compare_distributions(base, r, T, V, s.kl, s.top1);
        else s.top1 = T - 1;  // the unmodified model agrees with itself everywhere
        s.entropy = mine.entropy;
        s.max_weight = mine.max_weight;
    }
    return true;
}

struct SwapRun {
    std::vector<Window> windows;
    std::vector<WindowResult> results;  // one per window, in window order (a shard: its own only)
    double seconds = 0;
};

// Each window computed, or (a merge) read from the shards' records; a shard keeps its records.
bool run_windows(const DecoderModel& model, const TokenizedCorpus& corpus, const PlanList& plans, UnitSlice* slice, bool quiet,
                 SwapRun& run, std::string& error) {
    const auto start = SteadyClock::now();
    ProgressBar bar(quiet);
    const long long total = static_cast<long long>(run.windows.size() * plans.size());
    for (size_t w = 0; w < run.windows.size(); ++w) {
        WindowResult result;
        const Window& win = run.windows[w];
        if (computes_unit(slice, static_cast<int>(w))) {
            const std::span<const int> ids(corpus.tokens[static_cast<size_t>(win.document)].data() + win.offset,
                                           static_cast<size_t>(win.tokens));
            if (!run_window(model, plans, ids, bar, static_cast<long long>(w * plans.size()), total, result, error)) return false;
            if (slice) slice->produced[{0, static_cast<int>(w)}] = result.record();
        } else if (slice && slice->merging()) {
            const auto it = slice->given->find({0, static_cast<int>(w)});
            if (it == slice->given->end() || !result.read(it->second, plans.size(), static_cast<size_t>(model.shape().n_layer))) {
                error = "the shards hold no record, or one of the wrong length, for window " + std::to_string(w);
                return false;
            }
        } else {
            continue;  // another shard's window
        }
        run.results.push_back(std::move(result));
    }
    bar.update(total, total, "normalizer-swap: windows x plans");
    bar.finish_line();
    run.seconds = seconds_since(start);
    return true;
}

double exp_of(double v) { return std::exp(v); }

// Per window, one value of plan p picked by `pick`.
template <typename Pick>
std::vector<double> per_window(const SwapRun& run, Pick&& pick) {
    std::vector<double> v;
    for (const WindowResult& w : run.results) v.push_back(pick(w));
    return v;
}

struct SwapTables {
    TextTable plans{"normalizer_swap",
                    {"heads",
                     "normalizer",
                     "spec",
                     "layer",
                     "T",
                     "tokens",
                     "mean_nll",
                     "perplexity",
                     "perplexity_ratio",
                     "kl_mean",
                     "top1_agreement",
                     "windows",
                     "perplexity_lower",
                     "perplexity_upper",
                     "perplexity_ratio_lower",
                     "perplexity_ratio_upper",
                     "kl_mean_lower",
                     "kl_mean_upper",
                     "top1_agreement_lower",
                     "top1_agreement_upper"},
                    {}};
    TextTable layers{"normalizer_swap_layers",
                     {"heads", "normalizer", "layer", "swapped", "entropy_mean", "max_weight_mean", "entropy_mean_lower",
                      "entropy_mean_upper", "max_weight_mean_lower", "max_weight_mean_upper"},
                     {}};
    std::vector<double> mean_nll;  // per plan
};

// The row of normalizer_swap.csv for plan p (0: the unmodified model, "none").
void add_plan_row(const SwapRun& run, const PlanList& plans, size_t p, const WindowBootstrap& b, SwapTables& t) {
    const Swap s = p == 0 ? Swap{"none", "unmodified", -1} : plans.swaps[p - 1];
    double predicted = 0, nll = 0, base_nll = 0, kl = 0, top1 = 0;  // summed in window order
    for (const WindowResult& w : run.results) {
        predicted += w.predicted;
        nll += w.plans[p].nll;
        base_nll += w.plans[0].nll;
        kl += w.plans[p].kl;
        top1 += w.plans[p].top1;
    }
    const double mean_nll = nll / predicted, base_mean = base_nll / predicted;
    t.mean_nll.push_back(mean_nll);
    const size_t at = s.setting.find('@');
    const double temperature = at == std::string::npos ? 1.0 : std::stod(s.setting.substr(at + 1));
    const std::vector<double> n = per_window(run, [](const WindowResult& w) { return w.predicted; });
    std::vector<std::string> row = {s.heads,
                                    s.setting,
                                    p == 0 ? "" : s.spec(),
                                    std::to_string(s.layer),
                                    csv_number(temperature),
                                    std::to_string(static_cast<long long>(predicted)),
                                    csv_number(mean_nll),
                                    csv_number(std::exp(mean_nll)),
                                    csv_number(std::exp(mean_nll - base_mean)),
                                    csv_number(kl / predicted),
                                    csv_number(top1 / predicted),
                                    std::to_string(run.results.size())};
    const auto cells = [&](std::vector<std::string> pair) { row.insert(row.end(), pair.begin(), pair.end()); };
    cells(b.cells(per_window(run, [&](const WindowResult& w) { return w.plans[p].nll; }), n, exp_of));
    cells(b.cells(per_window(run, [&](const WindowResult& w) { return w.plans[p].nll - w.plans[0].nll; }), n, exp_of));
    cells(b.cells(per_window(run, [&](const WindowResult& w) { return w.plans[p].kl; }), n));
    cells(b.cells(per_window(run, [&](const WindowResult& w) { return w.plans[p].top1; }), n));
    t.plans.rows.push_back(std::move(row));
    const std::vector<double> ones(run.results.size(), 1.0);
    for (size_t l = 0; l < run.results.front().plans[p].entropy.size(); ++l) {
        const bool swapped = s.heads == "all" || s.layer == static_cast<int>(l);
        const std::vector<double> e = per_window(run, [&](const WindowResult& w) { return w.plans[p].entropy[l]; });
        const std::vector<double> m = per_window(run, [&](const WindowResult& w) { return w.plans[p].max_weight[l]; });
        double e_sum = 0, m_sum = 0;
        for (size_t w = 0; w < e.size(); ++w) e_sum += e[w], m_sum += m[w];
        const double windows = static_cast<double>(e.size());
        std::vector<std::string> lrow = {
            s.heads, s.setting, std::to_string(l), swapped ? "1" : "0", csv_number(e_sum / windows), csv_number(m_sum / windows)};
        for (const auto& pair : {b.cells(e, ones), b.cells(m, ones)}) lrow.insert(lrow.end(), pair.begin(), pair.end());
        t.layers.rows.push_back(std::move(lrow));
    }
}

void print_plans(const SwapTables& t) {
    std::printf("%-8s %-12s %12s %10s %12s %8s   (95%% interval of the ratio over windows)\n", "heads", "normalizer", "perplexity", "ratio",
                "KL (nats)", "top-1");
    for (const std::vector<std::string>& r : t.plans.rows)
        std::printf("%-8s %-12s %12.4f %10.4f %12.6f %8.4f   [%.4f, %.4f]\n", r[0].c_str(), r[1].c_str(), std::stod(r[7]), std::stod(r[8]),
                    std::stod(r[9]), std::stod(r[10]), std::stod(r[14]), std::stod(r[15]));
}

std::string windows_json(const std::vector<Window>& windows) {
    json::ArrayBuilder a;
    for (const Window& w : windows) a.add_raw(json::ArrayBuilder().add(w.document).add(w.offset).add(w.tokens).str());
    return a.str();
}

std::string summary_json(const Checkpoint& ck, const TokenizedCorpus& corpus, const AttentionPlan& base_plan, const PlanList& plans,
                         const SwapRun& run, const SwapTables& t, const WindowBootstrap& b, const std::vector<std::string>& files) {
    json::ObjectBuilder parameters, baseline, text, timing;
    std::vector<std::string> specs;
    for (const Swap& s : plans.swaps) specs.push_back(s.spec());
    parameters.add("baseline_attention", attention_spec(base_plan)).add_raw("plans", json::ArrayBuilder().add_all(specs).str());
    double predicted = 0, used = 0;
    for (const WindowResult& w : run.results) predicted += w.predicted;
    for (const Window& w : run.windows) used += w.tokens;
    baseline.add("mean_nll", t.mean_nll[0]).add("perplexity", std::exp(t.mean_nll[0])).add("predicted_tokens", static_cast<int>(predicted));
    text.add("corpus_sha256", corpus.sha256)
        .add_raw("documents", corpus.documents_json)
        .add("tokens_used", static_cast<int>(used))
        .add_raw("windows", windows_json(run.windows));
    timing.add("experiment_seconds", run.seconds).add("threads", max_threads());
    const std::vector<std::string> notes = {
        "windows: [document, offset, tokens], each inside one document; every figure is over all of them",
        "perplexity = exp(sum over windows and their predicted positions of -ln p(next token) / the number of predicted positions); "
        "perplexity_ratio = swapped / unmodified",
        "kl_mean: mean over the predicted positions of KL(unmodified || swapped) of the next-token distribution, in nats",
        "top1_agreement: fraction of the predicted positions where both put the same token first",
        "entropy_mean, max_weight_mean: per layer, the mean over windows of each window's mean over every head and query position of the "
        "weights the heads used (query t sees t + 1 keys)",
        "*_lower, *_upper: the 95% interval, a percentile bootstrap over windows (one resampling of the windows for every cell, so "
        "ratios are paired); perplexity's is exp of mean_nll's; nan with one window",
        "heads all=X swaps every head, L.*=X the heads of layer L only; all=softmax@1 is the control (the unmodified model when it was "
        "trained on softmax)"};
    json::ObjectBuilder s;
    s.add("experiment", "normalizer-swap")
        .add_raw("parameters", parameters.str())
        .add_raw("model", checkpoint_json(ck))
        .add_raw("text", text.str())
        .add_raw("baseline", baseline.str())
        .add_raw("intervals", bootstrap_json(b))
        .add_raw("notes", json::ArrayBuilder().add_all(notes).str())
        .add_raw("timing", timing.str())
        .add_raw("tables", json::ArrayBuilder().add_all(files).str());
    return s.str();
}

// The windows of the corpus, checked: some window, no token outside the vocabulary.
bool read_windows(const CliArgs& args, const DecoderShape& cfg, TokenizedCorpus& corpus, std::vector<Window>& windows, std::string& error) {
    std::optional<std::int64_t> max_tokens, most;
    if (!args.get_int("max-tokens", 2, 1 << 30, max_tokens, error) || !args.get_int("windows", 1, 1 << 30, most, error)) return false;
    if (!read_tokenized_corpus(args, cfg.vocab, "experiment normalizer-swap", corpus, error)) return false;
    const int length = static_cast<int>(std::min<std::int64_t>(cfg.max_positions, max_tokens.value_or(cfg.max_positions)));
    windows = corpus_windows(corpus, length, static_cast<int>(most.value_or(1 << 30)));
    if (windows.empty()) {
        error = corpus.documents[0].source + ": the text has " + std::to_string(corpus.tokens[0].size()) +
                " token(s); the experiment needs at least 2" + (corpus.documents.size() > 1 ? " (and so has every other document)" : "");
        return false;
    }
    for (const Window& w : windows)
        for (int i = 0; i < w.tokens; ++i)
            if (const int id = corpus.tokens[static_cast<size_t>(w.document)][static_cast<size_t>(w.offset + i)]; id >= cfg.vocab) {
                error = corpus.documents[static_cast<size_t>(w.document)].source + ": the text has token " + std::to_string(id) +
                        ", outside this model's vocabulary of " + std::to_string(cfg.vocab);
                return false;
            }
    return true;
}

}  // namespace

int cli_normalizer_swap(int argc, char** argv, int first) {
    if (printed_help(argc, argv, first, kHelp)) return 0;
    CliArgs args;
    std::string error;
    if (!args.parse(
            argc, argv, first,
            {"model", "text", "ids", "out", "attention", "max-tokens", "windows", "seed", "resamples", "threads", "vocab-dir", "shard"},
            {"quiet"}, error))
        return fail(error, 2);
    for (const char* required : {"model", "out"})
        if (!args.value(required)) return fail(std::string("--") + required + " is required\n" + kHelp, 2);
    std::optional<std::int64_t> threads;
    WindowBootstrap boot;
    if (!args.get_int("threads", 1, 1024, threads, error) || !read_bootstrap_options(args, boot, error)) return fail(error, 2);
    if (threads) set_max_threads(static_cast<int>(*threads));
    ShardSpec shard;
    if (!read_shard_option(args, shard, error)) return fail(error, 2);
    Checkpoint ck;
    if (!open_checkpoint(*args.value("model"), ck, error)) return fail(error);
    const DecoderShape cfg = ck.decoder->shape();
    AttentionPlan base_plan;
    PlanList plans;
    if (!attention_plan_option(args.value("attention"), *ck.decoder, base_plan, error) || !make_plans(cfg, base_plan, plans, error))
        return fail(error, 2);
    TokenizedCorpus corpus;
    SwapRun run;
    if (!read_windows(args, cfg, corpus, run.windows, error)) return fail(error, error.rfind("--", 0) == 0 ? 2 : 1);
    const std::filesystem::path out_dir = *args.value("out");
    if (!make_output_folder(out_dir, error)) return fail(error);

    ShardRun sharded;  // hashing the model costs a read of it: only for a shard or a merge
    if (shard.given || rerunning_from_shards()) {
        sharded = {"normalizer-swap", sha256_hex(ck.file.bytes()), corpus.sha256, attention_spec(base_plan),
                   shard_run_arguments(argc, argv, first - 1)};
        if (!same_as_merged_shards(sharded, error)) return fail(error);
    }
    const int n_windows = static_cast<int>(run.windows.size());
    const std::unique_ptr<UnitSlice> slice = unit_slice_for(shard, n_windows);
    if (!run_windows(*ck.decoder, corpus, plans, slice.get(), args.flag("quiet"), run, error)) return fail(error);
    if (slice && !slice->merging()) {
        if (!write_records_shard(out_dir, sharded, shard, n_windows, slice->produced, error)) return fail(error);
        std::printf("normalizer-swap shard %d/%d: windows %d..%d of %d in %s\n", shard.index, shard.count, slice->first, slice->end,
                    n_windows, (out_dir / "units.txt").c_str());
        return 0;
    }
    boot.draw(n_windows, 0x53574150 /* "SWAP" */);
    SwapTables tables;
    for (size_t p = 0; p < plans.size(); ++p) add_plan_row(run, plans, p, boot, tables);
    std::vector<std::string> files;
    for (const TextTable* t : {&tables.plans, &tables.layers}) {
        if (!write_table(out_dir, *t, error)) return fail(error);
        files.push_back(t->name + ".csv");
    }
    const std::filesystem::path summary = out_dir / "normalizer-swap.json";
    if (!write_text_file(summary, summary_json(ck, corpus, base_plan, plans, run, tables, boot, files) + "\n", error)) return fail(error);
    print_plans(tables);
    std::printf("normalizer-swap %.1f s, %d window(s), %zu plans: %s %s %s\n", run.seconds, n_windows, plans.size(),
                summary.filename().c_str(), files[0].c_str(), files[1].c_str());
    return 0;
}

}  // namespace attnlab
