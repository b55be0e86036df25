// attnlab experiment NAME: the paper's five experiments (PAPER.md §6) on a GPT-2 checkpoint and
// a text, written as tidy CSV tables plus a JSON summary per experiment.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/experiments.h"
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
#include "main/cli/cli_vocabulary.h"
#include "main/cli/experiments/cli_shard.h"
#include "platform/whole_file.h"

namespace attnlab {

namespace {

const char* const kHelp =
    "usage: attnlab experiment NAME --model FILE (--text PATH... | --ids 1,2,3) --out DIR [options]\n"
    "\n"
    "NAME: distance-vs-L (paper Alg.1, Fig.2a), distance-vs-N (Alg.2, Fig.2b), critical-n (Alg.3, Fig.2c),\n"
    "      separability (Alg.4, Fig.3), gradient (Alg.5, Fig.4), or all (the five, one forward pass);\n"
    "      normalizer-swap (PAPER.md §7: the model with its heads on other normalizers; its own options:\n"
    "      `attnlab experiment normalizer-swap --help`);\n"
    "      fading (PAPER.md §2, Lemma 1: each head's largest weight, entropy and previous-token weight against\n"
    "      the context length L, and with --needle a retrieval probe; `attnlab experiment fading --help`).\n"
    "\n"
    "--text may be given more than once; each is a text file (one document), a folder of .txt files (one\n"
    "document each, in path order) or a .jsonl file (one document per line, its \"text\" field). The five\n"
    "experiments run on one window: the first document with at least 2 tokens, tokenized by the model's\n"
    "tokenizer.json (else GPT-2's) and cut to the model's context; a window never crosses documents.\n"
    "Defaults are the paper's sweeps. Options:\n"
    "  --vectors values|residual   x_i: the head's value vectors (default) or the layer's input residual stream\n"
    "  --N n                       selection size for distance-vs-L (default 5)\n"
    "  --Ls 32,64,...              context lengths for distance-vs-L and critical-n (default 32, 64, ..., 1024)\n"
    "  --Ns 1,5,10,20,100          selection sizes for distance-vs-N\n"
    "  --separability-Ns LIST      selection sizes for separability (default 1..64)\n"
    "  --samples S                 Monte Carlo subsets per query for E[d] (default 8)\n"
    "  --critical-samples S        the same inside the critical-N search (default 4)\n"
    "  --ks-level A                KS test level for critical-n (default 0.01)\n"
    "  --max-critical-n N          largest N the critical-N search tries (default 256)\n"
    "  --temperatures LIST         gradient temperatures, AttnLab's T (T = 1 is GPT-2; default 26 points 1e-3..1e2)\n"
    "  --eps LIST                  finite-difference steps (default 0.001,0.1,10)\n"
    "  --M r                       sphere radius for separability (default 1)\n"
    "  --max-tokens n              use at most n tokens of the text (default: the model's context)\n"
    "  --seed S                    seed of every random draw (default 0); results do not depend on --threads\n"
    "  --threads n                 worker threads (default: all cores)\n"
    "  --ids LIST                  token ids instead of --text (already tokenized input)\n"
    "  --vocab-dir DIR             GPT-2 vocabulary (default: the model folder's tokenizer.json, else assets/gpt2)\n"
    "  --quiet                     no progress bar\n"
    "  --attention SPEC            run the forward pass under an attention plan (see `attnlab --help`); the five\n"
    "                              experiments then analyse the softmax of the scores that pass gives each head\n"
    "  --shard K/N                 compute only the K-th of N contiguous blocks of the heads (layer * n_head + head)\n"
    "                              and write DIR/units.txt (their results) and DIR/shard.json instead of the\n"
    "                              tables; `attnlab merge` joins the N folders into this run's files. critical-n's\n"
    "                              shards compute every N up to --max-critical-n (where the search stops needs\n"
    "                              every head)\n"
    "Writes DIR/<table>.csv for each table and DIR/<experiment>.json with the parameters, the counts of\n"
    "skipped queries, the SHA-256 of the model, the window's text and the corpus, the corpus's documents\n"
    "and the window, and the timing. tools/plot_figures.py DIR draws them.\n";

int fail(const std::string& message, int code = 1) { return command_failed("experiment", message, code); }

bool write_csv(const std::filesystem::path& path, const Table& t, std::string& error) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
        error = path.string() + ": cannot write";
        return false;
    }
    for (size_t i = 0; i < t.columns.size(); ++i) std::fprintf(f, i ? ",%s" : "%s", t.columns[i].c_str());
    std::fputc('\n', f);
    for (const auto& row : t.rows) {
        for (size_t i = 0; i < row.size(); ++i) std::fprintf(f, i ? ",%s" : "%s", csv_number(row[i]).c_str());
        std::fputc('\n', f);
    }
    const bool ok = std::fclose(f) == 0;
    if (!ok) error = path.string() + ": write failed (disk full?)";
    return ok;
}

template <typename Range>
std::string json_list(const Range& values) {
    json::ArrayBuilder a;
    for (const auto& v : values) a.add(static_cast<double>(v));
    return a.str();
}

struct RunContext {
    std::string model_path, model_sha256, text_path, text_sha256, corpus_sha256;
    std::string documents;    // the corpus's documents as a JSON array
    int window_document = 0;  // the document the window is cut from (windows never cross documents)
    const DecoderModel* decoder = nullptr;
    long long text_bytes = 0;
    int text_tokens = 0, tokens_used = 0, threads = 1;
    std::string attention;  // the plan the forward pass ran, as text ("" = softmax everywhere)
    double forward_seconds = 0;
};

std::string parameters_json(ExperimentKind kind, const ExperimentOptions& o) {
    json::ObjectBuilder p;
    p.add("vectors", o.residual_vectors ? "residual" : "values").add_raw("seed", std::to_string(o.seed));
    switch (kind) {
        case ExperimentKind::DistanceVsL: p.add("N", o.N).add_raw("Ls", json_list(o.Ls)).add("samples", o.samples); break;
        case ExperimentKind::DistanceVsN: p.add_raw("Ns", json_list(o.Ns)).add("samples", o.samples); break;
        case ExperimentKind::CriticalN:
            p.add_raw("Ls", json_list(o.Ls))
                .add("samples", o.critical_samples)
                .add("ks_level", o.ks_level)
                .add("max_critical_n", o.critical_max_n);
            break;
        case ExperimentKind::Separability: p.add_raw("Ns", json_list(o.separability_Ns)).add("M", o.M); break;
        case ExperimentKind::Gradient: p.add_raw("temperatures", json_list(o.temperatures)).add_raw("eps", json_list(o.eps)); break;
    }
    return p.str();
}

std::string summary_json(ExperimentKind kind, const ExperimentOptions& o, const ExperimentResult& r, const RunContext& ctx, double seconds,
                         const std::vector<std::string>& files) {
    json::ObjectBuilder model, text, queries, timing;
    model.add("path", ctx.model_path)
        .add("sha256", ctx.model_sha256)
        .add("n_layer", ctx.decoder->shape().n_layer)
        .add("n_head", ctx.decoder->shape().n_head)
        .add("n_embd", ctx.decoder->shape().hidden);
    text.add("path", ctx.text_path)
        .add("sha256", ctx.text_sha256)
        .add_raw("bytes", std::to_string(ctx.text_bytes))
        .add("tokens", ctx.text_tokens)
        .add("tokens_used", ctx.tokens_used)
        .add("corpus_sha256", ctx.corpus_sha256)
        .add_raw("documents", ctx.documents)
        .add_raw("window",
                 json::ObjectBuilder().add("document", ctx.window_document).add("offset", 0).add("tokens", ctx.tokens_used).str());
    queries.add_raw("used", std::to_string(r.queries_used)).add_raw("skipped", std::to_string(r.queries_skipped));
    model.add("attention", ctx.attention);
    timing.add("experiment_seconds", seconds).add("forward_pass_seconds", ctx.forward_seconds).add("threads", ctx.threads);
    json::ObjectBuilder s;
    s.add("experiment", experiment_name(kind))
        .add_raw("parameters", parameters_json(kind, o))
        .add_raw("model", model.str())
        .add_raw("text", text.str())
        .add_raw("queries", queries.str())
        .add_raw("notes", json::ArrayBuilder().add_all(r.notes).str())
        .add_raw("timing", timing.str())
        .add_raw("tables", json::ArrayBuilder().add_all(files).str());
    return s.str();
}

// The text the forward pass runs on: the first `max_tokens` (or the model's context) tokens of
// the first document of the corpus (--text, repeatable) that has at least 2, or the --ids list.
// Fills ctx with the documents, their hash and the window's source; false with a message.
bool read_corpus_window(const CliArgs& args, const DecoderShape& cfg, std::optional<std::int64_t> max_tokens, RunContext& ctx,
                        std::vector<int>& ids, std::string& error) {
    TokenizedCorpus corpus;
    if (!read_tokenized_corpus(args, cfg.vocab, "experiment", corpus, error)) return false;
    const std::vector<CorpusDocument>& documents = corpus.documents;
    std::vector<std::vector<int>>& tokens = corpus.tokens;
    ctx.documents = corpus.documents_json;
    ctx.corpus_sha256 = corpus.sha256;
    size_t w = 0;
    while (w < documents.size() && tokens[w].size() < 2) ++w;
    if (w == documents.size()) {
        error = documents[0].source + ": the text has " + std::to_string(tokens[0].size()) + " tokens; the experiments need at least 2" +
                (documents.size() > 1 ? " (and so has every other document of the corpus)" : "");
        return false;
    }
    ids = std::move(tokens[w]);
    ctx.window_document = static_cast<int>(w);
    ctx.text_path = documents[w].source;
    ctx.text_sha256 = sha256_hex(documents[w].text);
    ctx.text_bytes = static_cast<long long>(documents[w].text.size());
    ctx.text_tokens = static_cast<int>(ids.size());
    const int limit = std::min(cfg.max_positions, static_cast<int>(max_tokens.value_or(cfg.max_positions)));
    if (static_cast<int>(ids.size()) > limit) ids.resize(static_cast<size_t>(limit));
    for (int id : ids)
        if (id >= cfg.vocab) {
            error = ctx.text_path + ": the text has token " + std::to_string(id) + ", outside this model's vocabulary";
            return false;
        }
    return true;
}

// Reads the sweep options over the paper's defaults; false with a message on a bad value.
bool read_options(const CliArgs& a, int tokens, ExperimentOptions& o, std::string& error) {
    o = paper_sweeps(tokens);
    if (auto v = a.value("vectors")) {
        if (*v != "values" && *v != "residual") {
            error = "--vectors wants values or residual, got '" + *v + "'";
            return false;
        }
        o.residual_vectors = *v == "residual";
    }
    std::optional<std::int64_t> seed, samples, critical_samples, N, max_n;
    std::optional<double> level, M;
    if (!a.get_int("seed", 0, INT64_MAX, seed, error) || !a.get_int("samples", 1, 100000, samples, error) ||
        !a.get_int("critical-samples", 1, 100000, critical_samples, error) || !a.get_int("N", 1, tokens - 1, N, error) ||
        !a.get_int("max-critical-n", 1, 1 << 20, max_n, error) || !a.get_double("ks-level", 1e-12, 0.5, level, error) ||
        !a.get_double("M", 1e-12, 1e12, M, error))
        return false;
    if (seed) o.seed = static_cast<std::uint64_t>(*seed);
    if (samples) o.samples = static_cast<int>(*samples);
    if (critical_samples) o.critical_samples = static_cast<int>(*critical_samples);
    if (N) o.N = static_cast<int>(*N);
    if (max_n) o.critical_max_n = static_cast<int>(*max_n);
    if (level) o.ks_level = *level;
    if (M) o.M = *M;
    auto int_list = [&](const char* name, std::int64_t lo, std::vector<int>& out) {
        if (!a.value(name)) return true;
        std::vector<std::int64_t> v;
        if (!a.get_int_list(name, lo, tokens - (lo == 1 ? 1 : 0), v, error)) return false;
        out.assign(v.begin(), v.end());
        return true;
    };
    if (!int_list("Ls", 2, o.Ls) || !int_list("Ns", 1, o.Ns) || !int_list("separability-Ns", 1, o.separability_Ns)) return false;
    if (a.value("temperatures") && !a.get_double_list("temperatures", 1e-6, 1e6, o.temperatures, error)) return false;
    if (a.value("eps") && !a.get_double_list("eps", 1e-12, 1e6, o.eps, error)) return false;
    return true;
}

}  // namespace

int cli_experiment(int argc, char** argv, int first) {
    if (first >= argc) return fail(std::string("name the experiment\n") + kHelp, 2);
    const std::string name = argv[first];
    if (name == "--help" || name == "-h") {
        std::fputs(kHelp, stdout);
        return 0;
    }
    if (name == "normalizer-swap") return cli_normalizer_swap(argc, argv, first + 1);
    if (name == "fading") return cli_fading(argc, argv, first + 1);
    std::vector<ExperimentKind> kinds;
    std::string error;
    if (name == "all") {
        kinds.assign(std::begin(kAllExperiments), std::end(kAllExperiments));
    } else {
        ExperimentKind k;
        if (!parse_experiment_name(name, k, error)) return fail(error, 2);
        kinds.push_back(k);
    }
    CliArgs args;
    if (!args.parse(argc, argv, first + 1, {"model",
                                            "text",
                                            "out",
                                            "vectors",
                                            "seed",
                                            "samples",
                                            "critical-samples",
                                            "N",
                                            "Ls",
                                            "Ns",
                                            "separability-Ns",
                                            "temperatures",
                                            "eps",
                                            "ks-level",
                                            "max-critical-n",
                                            "M",
                                            "max-tokens",
                                            "threads",
                                            "vocab-dir",
                                            "ids",
                                            "attention",
                                            "shard"},
                    {"quiet"}, error))
        return fail(error, 2);
    for (const char* required : {"model", "out"})
        if (!args.value(required)) return fail(std::string("--") + required + " is required\n" + kHelp, 2);
    if (args.value("text").has_value() == args.value("ids").has_value())
        return fail("give the text as --text FILE or as --ids 1,2,3 (one of them)", 2);
    std::optional<std::int64_t> threads, max_tokens;
    if (!args.get_int("threads", 1, 1024, threads, error) || !args.get_int("max-tokens", 2, 1 << 20, max_tokens, error))
        return fail(error, 2);
    if (threads) set_max_threads(static_cast<int>(*threads));
    ShardSpec shard;
    if (!read_shard_option(args, shard, error)) return fail(error, 2);

    RunContext ctx;
    ctx.threads = max_threads();
    Checkpoint ck;
    if (!open_checkpoint(*args.value("model"), ck, error)) return fail(error);
    const DecoderShape cfg = ck.decoder->shape();
    ctx.decoder = ck.decoder;
    AttentionPlan plan;
    if (!attention_plan_option(args.value("attention"), *ck.decoder, plan, error)) return fail(error, 2);
    ctx.attention = attention_spec(plan);
    ctx.model_path = ck.path;
    std::vector<int> ids;
    if (!read_corpus_window(args, cfg, max_tokens, ctx, ids, error)) return fail(error);
    ctx.tokens_used = static_cast<int>(ids.size());
    const int T = ctx.tokens_used;

    ExperimentOptions options;
    if (!read_options(args, T, options, error)) return fail(error, 2);
    const std::filesystem::path out_dir = *args.value("out");
    if (!make_output_folder(out_dir, error)) return fail(error);

    ctx.model_sha256 = sha256_hex(ck.file.bytes());
    const ShardRun sharded{name, ctx.model_sha256, ctx.corpus_sha256, ctx.attention, shard_run_arguments(argc, argv, first)};
    if (!same_as_merged_shards(sharded, error)) return fail(error);

    const auto forward_start = SteadyClock::now();
    AttentionCapture capture(options.residual_vectors);
    const std::unique_ptr<DecoderState> state = ck.decoder->new_state();
    state->attention_plan() = plan;
    std::vector<float> logits;
    if (!state->forward(ids, logits, error, false, &capture)) return fail(error);
    ctx.forward_seconds = seconds_since(forward_start);
    std::printf("%s: %d of %d tokens, forward pass %.2f s, %d threads\n", ctx.text_path.c_str(), T, ctx.text_tokens, ctx.forward_seconds,
                ctx.threads);
    if (ctx.text_tokens > T) std::printf("  (the text is cut to its first %d tokens)\n", T);

    const int heads = cfg.n_layer * cfg.n_head;
    const std::unique_ptr<UnitSlice> slice = unit_slice_for(shard, heads);
    options.slice = slice.get();
    const bool shard_only = slice && !slice->merging();
    ProgressBar bar(args.flag("quiet"));
    double total_seconds = ctx.forward_seconds;
    for (ExperimentKind kind : kinds) {
        const auto start = SteadyClock::now();
        ExperimentResult result;
        if (!run_experiment(kind, capture, options, result, error,
                            [&](long long done, long long total, const std::string& stage) { bar.update(done, total, stage); })) {
            bar.finish_line();
            return fail(std::string(experiment_name(kind)) + ": " + error);
        }
        bar.finish_line();
        const double seconds = seconds_since(start);
        total_seconds += seconds;
        if (shard_only) {
            std::printf("%-14s %7.1f s  heads %d..%d of %d\n", experiment_name(kind), seconds, slice->first, slice->end, heads);
            continue;
        }
        std::vector<std::string> files;
        for (const Table& t : result.tables) {
            const std::string file = t.name + ".csv";
            if (!write_csv(out_dir / file, t, error)) return fail(error);
            files.push_back(file);
        }
        const std::filesystem::path summary = out_dir / (std::string(experiment_name(kind)) + ".json");
        const std::string json_text = summary_json(kind, options, result, ctx, seconds, files) + "\n";
        if (!write_text_file(summary, json_text, error)) return fail(error);
        std::printf("%-14s %7.1f s  %s", experiment_name(kind), seconds, summary.filename().c_str());
        for (size_t i = 0; i < files.size(); ++i) std::printf(" %s (%zu rows)", files[i].c_str(), result.tables[i].rows.size());
        std::printf("\n");
        std::fflush(stdout);
    }
    if (kinds.size() > 1) std::printf("total %.1f s including the forward pass\n", total_seconds);
    if (shard_only) {
        if (!write_records_shard(out_dir, sharded, shard, heads, slice->produced, error)) return fail(error);
        std::printf("shard %d/%d: heads %d..%d of %d in %s\n", shard.index, shard.count, slice->first, slice->end, heads,
                    (out_dir / "units.txt").c_str());
    }
    return 0;
}

}  // namespace attnlab
