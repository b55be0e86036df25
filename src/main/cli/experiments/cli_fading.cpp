// attnlab experiment fading: how attention fades with context length inside a model (PAPER.md §2,
// Lemma 1; issue 29). For L = 8, 16, ... it averages, per head, what the query that sees exactly L
// keys does: its largest weight, its entropy and its weight on the previous token, against the
// uniform 1/L and ln L and Lemma 1's band. --needle adds a retrieval probe: a token pair (A B)
// planted early in a filler text, A repeated at the query, and the weight and rank of B.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/fading.h"
#include "base/json.h"
#include "base/parallel.h"
#include "base/sha256.h"
#include "base/timing.h"
#include "main/cli/cli_args.h"
#include "main/cli/cli_checkpoint.h"
#include "main/cli/cli_commands.h"
#include "main/cli/cli_output.h"
#include "main/cli/cli_progress.h"
#include "main/cli/cli_text_nll.h"
#include "main/cli/experiments/cli_intervals.h"
#include "main/cli/experiments/cli_shard.h"

namespace attnlab {

namespace {

const char* const kHelp =
    "usage: attnlab experiment fading --model FILE (--text FILE | --ids 1,2,3) --out DIR [options]\n"
    "\n"
    "For context lengths L = 8, 16, 24, ... up to --max-L, records per layer and head, over the queries that\n"
    "see exactly L keys, the mean largest weight, the mean entropy (nats) and the mean weight on the previous\n"
    "token, next to the uniform 1/L and ln L and Lemma 1's band (PAPER.md §2; softmax heads only). Each window\n"
    "is one causal pass over --max-L consecutive tokens of the text, fresh from position 0; its query at\n"
    "position L-1 sees exactly the window's first L tokens, as a pass over those L tokens alone would. The\n"
    "windows start at evenly spaced offsets of the text, so each (L, layer, head) averages one query per window.\n"
    "Options:\n"
    "  --max-L n          the longest context (default: the model's context, or the text's tokens if fewer)\n"
    "  --windows n        windows of the text to average over (default 8; fewer when the text is short:\n"
    "                     one per distinct offset)\n"
    "  --needle           also the needle probe: the first token A of the text that occurs there exactly once,\n"
    "                     and the different token B after it, planted at positions 1 and 2 of a filler (the\n"
    "                     text without any A or B), and A again at position L-1; records the weight each head\n"
    "                     puts on B (what an induction head attends to) and B's rank among the L keys\n"
    "  --json             print DIR/fading.json to stdout instead of the table\n"
    "  --threads n        worker threads (default: all cores); results do not depend on it\n"
    "  --vocab-dir DIR    GPT-2 vocabulary (default: the model folder's tokenizer.json, else assets/gpt2)\n"
    "  --quiet            no progress on stderr\n"
    "  --attention SPEC   run the heads under an attention plan, e.g. all=ssmax:0.43: a zero-shot swap in a\n"
    "                     model trained with softmax, not a model trained with SSMax\n"
    "  --seed n           the seed of the intervals' bootstrap over windows (default 0); --resamples n its\n"
    "                     resamples (default 1000)\n"
    "  --shard K/N        run only the K-th of N contiguous blocks of the windows (and of the needle's) and\n"
    "                     write DIR/units.txt (each window's sums) and DIR/shard.json instead of the tables;\n"
    "                     `attnlab merge` joins the N folders into this run's files\n"
    "Writes DIR/fading.csv (a row per L, layer and head), DIR/needle.csv with --needle, and DIR/fading.json;\n"
    "each mean over windows has a 95% interval (*_lower, *_upper): a percentile bootstrap over the windows.\n"
    "tools/plot_figures.py DIR draws them.\n";

int fail(const std::string& message, int code = 1) { return command_failed("experiment fading", message, code); }

constexpr int kStep = 8;  // L = 8, 16, ...

// Running sums for the needle probe's (L, layer, head) cells.
struct NeedleSums {
    double weight = 0, rank = 0;
    int queries = 0;
};

// One cell per (L, layer, head), L from Ls.
template <typename Cell>
struct HeadGrid {
    std::vector<int> Ls;
    int n_layer = 0, n_head = 0;
    std::vector<Cell> cells;

    HeadGrid(std::vector<int> lengths, int layers, int heads)
        : Ls(std::move(lengths)), n_layer(layers), n_head(heads), cells(Ls.size() * static_cast<size_t>(layers * heads)) {}
    size_t index(size_t li, int layer, int head) const { return (li * static_cast<size_t>(n_layer) + layer) * n_head + head; }
    Cell& at(size_t li, int layer, int head) { return cells[index(li, layer, head)]; }
    const Cell& at(size_t li, int layer, int head) const { return cells[index(li, layer, head)]; }
    HeadGrid empty() const { return HeadGrid(Ls, n_layer, n_head); }
};

// A cell's sums as doubles (a window's record holds every cell's), and back; the counts are exact.
std::vector<double> cell_values(const FadingSums& s) {
    return {s.max_weight, s.entropy, s.previous_weight, s.lemma1_lower, s.lemma1_upper, double(s.queries), double(s.lemma1_queries)};
}
void set_cell(const double* v, FadingSums& s) { s = {v[0], v[1], v[2], v[3], v[4], static_cast<int>(v[5]), static_cast<int>(v[6])}; }
void add_cell(const FadingSums& w, FadingSums& s) {
    s.max_weight += w.max_weight;
    s.entropy += w.entropy;
    s.previous_weight += w.previous_weight;
    s.lemma1_lower += w.lemma1_lower;
    s.lemma1_upper += w.lemma1_upper;
    s.queries += w.queries;
    s.lemma1_queries += w.lemma1_queries;
}
std::vector<double> cell_values(const NeedleSums& s) { return {s.weight, s.rank, double(s.queries)}; }
void set_cell(const double* v, NeedleSums& s) { s = {v[0], v[1], static_cast<int>(v[2])}; }
void add_cell(const NeedleSums& w, NeedleSums& s) {
    s.weight += w.weight;
    s.rank += w.rank;
    s.queries += w.queries;
}

// The windows are the units of --shard: each window's sums go into a grid of its own, which a
// shard keeps as a record and every other run adds to the total in window order. A window adds
// one query to each cell, so its grid holds the query's values exactly (0 + v = v) and the total
// is the same sum, bit for bit, as adding the queries straight into it. A merge takes each
// window's grid from the shards' records instead of computing it. Each window's grid is kept in
// `kept` too (in window order), for the intervals over windows.
template <typename Cell, typename Compute>
bool run_windows(UnitSlice* slice, int stage, HeadGrid<Cell>& total, std::vector<HeadGrid<Cell>>& kept, int windows, Compute&& compute,
                 std::string& error) {
    const size_t width = cell_values(Cell{}).size();
    for (int w = 0; w < windows; ++w) {
        HeadGrid<Cell> grid = total.empty();
        if (computes_unit(slice, w)) {
            if (!compute(w, grid)) return false;
            if (slice) {
                std::vector<double>& record = slice->produced[{stage, w}];
                for (const Cell& c : grid.cells) {
                    const std::vector<double> v = cell_values(c);
                    record.insert(record.end(), v.begin(), v.end());
                }
            }
        } else if (slice && slice->merging()) {
            const auto it = slice->given->find({stage, w});
            if (it == slice->given->end() || it->second.size() != grid.cells.size() * width) {
                error = "the shards hold no record, or one of the wrong length, for window " + std::to_string(w) + " of stage " +
                        std::to_string(stage);
                return false;
            }
            for (size_t i = 0; i < grid.cells.size(); ++i) set_cell(it->second.data() + i * width, grid.cells[i]);
        } else {
            continue;  // another shard's window
        }
        for (size_t i = 0; i < grid.cells.size(); ++i) add_cell(grid.cells[i], total.cells[i]);
        if (builds_tables(slice)) kept.push_back(std::move(grid));
    }
    return true;
}

std::vector<int> context_lengths(int max_L) {
    std::vector<int> Ls;
    for (int L = kStep; L <= max_L; L += kStep) Ls.push_back(L);
    return Ls;
}

// `count` start offsets of windows of `length` tokens in a text of `tokens`, evenly spaced from 0
// to the last one that fits, fewer when fewer distinct offsets exist.
std::vector<int> window_offsets(int tokens, int length, int count) {
    const int n = std::min(count, tokens - length + 1);
    std::vector<int> offsets;
    for (int k = 0; k < n; ++k) offsets.push_back(n == 1 ? 0 : static_cast<int>(static_cast<long long>(k) * (tokens - length) / (n - 1)));
    return offsets;
}

// The temperature of a head that runs softmax (entmax:1 is softmax too); none for any other.
std::optional<double> softmax_temperature(const HeadPlan& plan) {
    if (plan.normalizer == Normalizer{}) return plan.temperature;
    return std::nullopt;
}

// Adds, for every head, the queries of one window that see L keys (row L-1 of its weights).
// The forward pass calls on_head one head at a time (heads it observes run serially).
class FadingObserver final : public AttentionObserver {
public:
    explicit FadingObserver(HeadGrid<FadingSums>& grid) : grid_(grid) {}
    void on_layer(const LayerQkv&) override {}
    bool wants_head(int, int) const override { return true; }
    void on_head(const HeadAttention& a) override {
        for (size_t li = 0; li < grid_.Ls.size(); ++li) {
            const int L = grid_.Ls[li], row = L - 1 - a.t0;
            if (row < 0 || row >= a.n) continue;
            const size_t at = static_cast<size_t>(row) * a.t_total;
            add_fading_query({a.weights + at, static_cast<size_t>(L)}, {a.scores + at, static_cast<size_t>(L)}, softmax_temperature(a.plan),
                             grid_.at(li, a.layer, a.head));
        }
    }

private:
    HeadGrid<FadingSums>& grid_;
};

// Adds the last query's weight on the needle's successor B (at `b_position`) and B's rank.
class NeedleObserver final : public AttentionObserver {
public:
    NeedleObserver(HeadGrid<NeedleSums>& grid, int b_position) : grid_(grid), b_(b_position) {}
    size_t li = 0;  // the cell's L, set before each pass
    void on_layer(const LayerQkv&) override {}
    bool wants_head(int, int) const override { return true; }
    void on_head(const HeadAttention& a) override {
        const std::span<const float> row(a.weights + static_cast<size_t>(a.n - 1) * a.t_total, static_cast<size_t>(a.t_total));
        NeedleSums& cell = grid_.at(li, a.layer, a.head);
        cell.weight += row[static_cast<size_t>(b_)];
        cell.rank += weight_rank(row, b_);
        ++cell.queries;
    }

private:
    HeadGrid<NeedleSums>& grid_;
    int b_;
};

struct FadingRun {
    std::vector<int> offsets;  // the windows' first tokens in the text
    int max_L = 0;
    HeadGrid<FadingSums> grid{{}, 0, 0};
    std::vector<HeadGrid<FadingSums>> per_window;  // each window's grid, for the intervals
    double seconds = 0;
};

bool run_fading(const DecoderModel& model, const AttentionPlan& plan, const std::vector<int>& ids, int windows, UnitSlice* slice,
                ProgressBar& bar, FadingRun& run, std::string& error) {
    const DecoderShape c = model.shape();
    run.grid = HeadGrid<FadingSums>(context_lengths(run.max_L), c.n_layer, c.n_head);
    run.offsets = window_offsets(static_cast<int>(ids.size()), run.max_L, windows);
    const auto start = SteadyClock::now();
    const auto one_window = [&](int w, HeadGrid<FadingSums>& grid) {
        bar.update(w, static_cast<long long>(run.offsets.size()), "fading: windows");
        FadingObserver observer(grid);
        const std::unique_ptr<DecoderState> state = model.new_state();
        state->attention_plan() = plan;
        const std::span<const int> window(ids.data() + run.offsets[static_cast<size_t>(w)], static_cast<size_t>(run.max_L));
        return state->prefill(window, error, &observer);
    };
    if (!run_windows(slice, 0, run.grid, run.per_window, static_cast<int>(run.offsets.size()), one_window, error)) return false;
    bar.update(static_cast<long long>(run.offsets.size()), static_cast<long long>(run.offsets.size()), "fading: windows");
    bar.finish_line();
    run.seconds = seconds_since(start);
    return true;
}

// The needle pair and the filler it is planted in, chosen from the text.
struct Needle {
    int a = -1, b = -1;
    int text_position = -1;   // A's position in the text
    std::vector<int> filler;  // the text without any A or B
};

// A: the first token of the text that occurs in it exactly once and has a token after it; B: that
// token. Removing A and B from the filler leaves the planted A the only earlier copy of the query's
// token, so B is the one key that copying (an induction head) would pick.
bool choose_needle(const std::vector<int>& ids, Needle& out, std::string& error) {
    std::map<int, int> count;
    for (int id : ids) ++count[id];
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
        if (count[ids[i]] != 1) continue;
        out.a = ids[i];
        out.b = ids[i + 1];
        out.text_position = static_cast<int>(i);
        for (int id : ids)
            if (id != out.a && id != out.b) out.filler.push_back(id);
        return true;
    }
    error = "--needle: no token of the text occurs in it exactly once with a token after it; the probe needs one";
    return false;
}

struct NeedleRun {
    Needle needle;
    std::vector<int> offsets;  // the filler's first token in each window
    HeadGrid<NeedleSums> grid{{}, 0, 0};
    std::vector<HeadGrid<NeedleSums>> per_window;  // each window's grid, for the intervals
    double seconds = 0;
};

// Per window: [f_o, A, B, f_o+1, ...] prefilled once and grown 8 tokens at a time; for each L, a
// copy of that state sees A at position L - 1, so a window costs one pass over its longest context.
bool run_needle(const DecoderModel& model, const AttentionPlan& plan, int max_L, int windows, UnitSlice* slice, ProgressBar& bar,
                NeedleRun& run, std::string& error) {
    const std::vector<int>& filler = run.needle.filler;
    const int longest = std::min(max_L, static_cast<int>(filler.size()) + 3);
    if (longest < kStep) {
        error = "--needle: the filler (the text without A and B) has " + std::to_string(filler.size()) +
                " tokens; the probe needs at least " + std::to_string(kStep - 3);
        return false;
    }
    run.grid = HeadGrid<NeedleSums>(context_lengths(longest), model.shape().n_layer, model.shape().n_head);
    run.offsets = window_offsets(static_cast<int>(filler.size()), longest - 3, windows);
    const auto start = SteadyClock::now();
    const long long total = static_cast<long long>(run.offsets.size() * run.grid.Ls.size());
    const auto one_window = [&](int w, HeadGrid<NeedleSums>& grid) {
        const size_t o = static_cast<size_t>(run.offsets[static_cast<size_t>(w)]);
        NeedleObserver observer(grid, 2);
        const std::unique_ptr<DecoderState> state = model.new_state();
        state->attention_plan() = plan;
        std::vector<int> prefix = {filler[o], run.needle.a, run.needle.b};
        for (size_t li = 0; li < run.grid.Ls.size(); ++li) {
            bar.update(static_cast<long long>(static_cast<size_t>(w) * run.grid.Ls.size() + li), total, "fading: needle");
            while (static_cast<int>(prefix.size()) < run.grid.Ls[li] - 1) prefix.push_back(filler[o + prefix.size() - 2]);
            if (!state->prefill(std::span<const int>(prefix).subspan(static_cast<size_t>(state->length())), error)) return false;
            const std::unique_ptr<DecoderState> probe = state->clone();  // the query A at position L - 1, then discarded
            observer.li = li;
            if (!probe->prefill(std::span<const int>(&run.needle.a, 1), error, &observer)) return false;
        }
        return true;
    };
    if (!run_windows(slice, 1, run.grid, run.per_window, static_cast<int>(run.offsets.size()), one_window, error)) return false;
    bar.update(total, total, "fading: needle");
    bar.finish_line();
    run.seconds = seconds_since(start);
    return true;
}

// A cell's interval over the windows of sum field / sum queries (each window adds one query).
template <typename Cell, typename Field>
std::vector<std::string> window_interval(const WindowBootstrap& b, const std::vector<HeadGrid<Cell>>& windows, size_t cell, Field field) {
    std::vector<double> x, n;
    for (const HeadGrid<Cell>& w : windows) {
        x.push_back(field(w.cells[cell]));
        n.push_back(w.cells[cell].queries);
    }
    return b.cells(x, n);
}

// A row per (L, layer, head) in grid order, each made by row(li, layer, head, cell index), in
// parallel (the intervals' resampling is the costly part) and in a fixed order.
template <typename Cell, typename Row>
std::vector<std::vector<std::string>> grid_rows(const HeadGrid<Cell>& grid, Row&& row) {
    std::vector<std::vector<std::string>> rows(grid.cells.size());
    parallel_for(static_cast<int>(rows.size()), [&](int i) {
        const int per_L = grid.n_layer * grid.n_head;
        const int li = i / per_L, l = i % per_L / grid.n_head, h = i % grid.n_head;
        rows[static_cast<size_t>(i)] = row(static_cast<size_t>(li), l, h, grid.index(static_cast<size_t>(li), l, h));
    });
    return rows;
}

void append(std::vector<std::string>& row, const std::vector<std::string>& more) { row.insert(row.end(), more.begin(), more.end()); }

TextTable fading_table(const FadingRun& run, const AttentionPlan& plan, const WindowBootstrap& b) {
    TextTable t{
        "fading",
        {"L", "layer", "head", "queries", "max_weight_mean", "entropy_mean", "previous_weight_mean", "uniform_weight", "uniform_entropy",
         "lemma1_lower_mean", "lemma1_upper_mean", "softmax_head", "max_weight_mean_lower", "max_weight_mean_upper", "entropy_mean_lower",
         "entropy_mean_upper", "previous_weight_mean_lower", "previous_weight_mean_upper"},
        {}};
    const HeadGrid<FadingSums>& grid = run.grid;
    t.rows = grid_rows(grid, [&](size_t li, int l, int h, size_t cell) {
        const FadingSums& s = grid.cells[cell];
        const int L = grid.Ls[li];
        const bool lemma = s.lemma1_queries > 0;
        const double nan = std::nan("");
        std::vector<std::string> row = {std::to_string(L),
                                        std::to_string(l),
                                        std::to_string(h),
                                        std::to_string(s.queries),
                                        csv_number(s.mean(s.max_weight)),
                                        csv_number(s.mean(s.entropy)),
                                        csv_number(s.mean(s.previous_weight)),
                                        csv_number(1.0 / L),
                                        csv_number(std::log(static_cast<double>(L))),
                                        csv_number(lemma ? s.lemma1_lower / s.lemma1_queries : nan),
                                        csv_number(lemma ? s.lemma1_upper / s.lemma1_queries : nan),
                                        softmax_temperature(plan.at(l, h)) ? "1" : "0"};
        append(row, window_interval(b, run.per_window, cell, [](const FadingSums& c) { return c.max_weight; }));
        append(row, window_interval(b, run.per_window, cell, [](const FadingSums& c) { return c.entropy; }));
        append(row, window_interval(b, run.per_window, cell, [](const FadingSums& c) { return c.previous_weight; }));
        return row;
    });
    return t;
}

TextTable needle_table(const NeedleRun& run, const WindowBootstrap& b) {
    TextTable t{"needle",
                {"L", "layer", "head", "queries", "needle_weight_mean", "needle_rank_mean", "uniform_weight", "needle_weight_mean_lower",
                 "needle_weight_mean_upper", "needle_rank_mean_lower", "needle_rank_mean_upper"},
                {}};
    const HeadGrid<NeedleSums>& grid = run.grid;
    t.rows = grid_rows(grid, [&](size_t li, int l, int h, size_t cell) {
        const NeedleSums& s = grid.cells[cell];
        const int L = grid.Ls[li];
        std::vector<std::string> row = {std::to_string(L),
                                        std::to_string(l),
                                        std::to_string(h),
                                        std::to_string(s.queries),
                                        csv_number(s.weight / s.queries),
                                        csv_number(s.rank / s.queries),
                                        csv_number(1.0 / L)};
        append(row, window_interval(b, run.per_window, cell, [](const NeedleSums& c) { return c.weight; }));
        append(row, window_interval(b, run.per_window, cell, [](const NeedleSums& c) { return c.rank; }));
        return row;
    });
    return t;
}

std::string int_list_json(const std::vector<int>& values) {
    json::ArrayBuilder a;
    for (int v : values) a.add(v);
    return a.str();
}

std::string needle_json(const NeedleRun& run, const TextTable& table) {
    json::ObjectBuilder o;
    o.add("a", run.needle.a)
        .add("b", run.needle.b)
        .add("a_text_position", run.needle.text_position)
        .add("a_position", 1)
        .add("b_position", 2)
        .add("filler_tokens", static_cast<int>(run.needle.filler.size()))
        .add("windows", static_cast<int>(run.offsets.size()))
        .add_raw("window_offsets", int_list_json(run.offsets))
        .add_raw("Ls", int_list_json(run.grid.Ls))
        .add("seconds", run.seconds)
        .add("how",
             "the model reads [f_o, A, B, f_o+1, ..., f_o+L-4, A]: A the first token that occurs once in the text, B the "
             "token after it, f the text without any A or B, o the window's offset; needle_weight_mean is the weight the "
             "query A gives B, needle_rank_mean B's rank among the L keys (1 = largest)")
        .add_raw("table", table_json(table));
    return o.str();
}

std::string summary_json(const Checkpoint& ck, const TextInput& in, const AttentionPlan& plan, const FadingRun& run,
                         const TextTable& fading, const NeedleRun* needle, const TextTable& needle_rows, const WindowBootstrap& b) {
    const std::string spec = attention_spec(plan), trained = attention_spec(ck.decoder->trained_plan());
    json::ObjectBuilder parameters, timing;
    parameters.add("attention", spec)
        .add("trained_attention", trained)
        .add("zero_shot_swap", !(plan == ck.decoder->trained_plan()))
        .add("max_L", run.max_L)
        .add_raw("Ls", int_list_json(run.grid.Ls))
        .add("windows", static_cast<int>(run.offsets.size()))
        .add_raw("window_offsets", int_list_json(run.offsets))
        .add("needle", needle != nullptr);
    timing.add("fading_seconds", run.seconds).add("threads", max_threads());
    const std::vector<std::string> notes = {
        "each window is one causal pass over max_L consecutive tokens from position 0; its query at position L-1 sees exactly L keys; "
        "queries = windows averaged per row",
        "entropy in nats; uniform_weight = 1/L and uniform_entropy = ln L are a head that spreads evenly",
        "lemma1_lower_mean, lemma1_upper_mean: the mean over queries of Lemma 1's band (1/L) e^(-2a/T), (1/L) e^(2a/T) with a = max |q.k / "
        "sqrt(d)| over the query's keys, the upper end capped at 1; only for heads that run softmax (softmax_head = 1), null otherwise",
        "zero_shot_swap: the plan differs from the one the model was trained with (a swap, not a model trained with it)",
        "*_lower, *_upper: the 95% interval of the mean over windows, a percentile bootstrap over the windows (needle.csv: over the "
        "needle's windows); nan with one window"};
    json::ObjectBuilder s;
    s.add("experiment", "fading")
        .add_raw("parameters", parameters.str())
        .add_raw("model", checkpoint_json(ck))
        .add_raw("text", text_input_json(in))
        .add_raw("intervals", bootstrap_json(b))
        .add_raw("notes", json::ArrayBuilder().add_all(notes).str())
        .add_raw("timing", timing.str())
        .add_raw("fading", table_json(fading));
    if (needle) s.add_raw("needle", needle_json(*needle, needle_rows));
    return s.str();
}

// Per L: 1/L and each layer's mean over heads of the largest weight; ln L and the mean entropy.
void print_fading(const FadingRun& run) {
    const HeadGrid<FadingSums>& g = run.grid;
    std::printf("max.l: layer l's mean over heads of the largest weight; ent.l: of the entropy (nats)\n%5s %8s ", "L", "1/L");
    for (int l = 0; l < g.n_layer; ++l) std::printf(" %8s", ("max." + std::to_string(l)).c_str());
    std::printf(" | %6s ", "ln L");
    for (int l = 0; l < g.n_layer; ++l) std::printf(" %8s", ("ent." + std::to_string(l)).c_str());
    std::printf("\n");
    for (size_t li = 0; li < g.Ls.size(); ++li) {
        std::printf("%5d %8.5f ", g.Ls[li], 1.0 / g.Ls[li]);
        for (int pass = 0; pass < 2; ++pass) {
            if (pass) std::printf(" | %6.3f ", std::log(static_cast<double>(g.Ls[li])));
            for (int l = 0; l < g.n_layer; ++l) {
                double sum = 0;
                for (int h = 0; h < g.n_head; ++h) {
                    const FadingSums& s = g.at(li, l, h);
                    sum += s.mean(pass ? s.entropy : s.max_weight);
                }
                std::printf(" %8.5f", sum / g.n_head);
            }
        }
        std::printf("\n");
    }
}

// Per L: each layer's head with the most weight on the needle's successor B, its weight and rank.
void print_needle(const NeedleRun& run) {
    const HeadGrid<NeedleSums>& g = run.grid;
    std::printf("needle: A = %d, B = %d (A at token %d of the text), filler %zu tokens, %zu windows\n", run.needle.a, run.needle.b,
                run.needle.text_position, run.needle.filler.size(), run.offsets.size());
    std::printf("%5s %8s  per layer: the head with the most weight on B: head weight rank\n", "L", "1/L");
    for (size_t li = 0; li < g.Ls.size(); ++li) {
        std::printf("%5d %8.5f ", g.Ls[li], 1.0 / g.Ls[li]);
        for (int l = 0; l < g.n_layer; ++l) {
            int best = 0;
            for (int h = 1; h < g.n_head; ++h)
                if (g.at(li, l, h).weight > g.at(li, l, best).weight) best = h;
            const NeedleSums& s = g.at(li, l, best);
            std::printf("  %d.%d %7.4f %6.1f", l, best, s.weight / s.queries, s.rank / s.queries);
        }
        std::printf("\n");
    }
}

// --max-L and --windows, checked against the model and the text.
bool read_lengths(const CliArgs& args, const DecoderShape& cfg, int tokens, int& max_L, int& windows, std::string& error) {
    if (tokens < kStep) {
        error = "the text has " + std::to_string(tokens) + " token(s); the experiment needs at least " + std::to_string(kStep) +
                " (its shortest context)";
        return false;
    }
    std::optional<std::int64_t> L, n;
    if (!args.get_int("max-L", kStep, std::min(cfg.max_positions, tokens), L, error) || !args.get_int("windows", 1, 1 << 20, n, error)) {
        if (error.find("max-L") != std::string::npos)
            error += " (at most the model's context, " + std::to_string(cfg.max_positions) + ", and the text's " + std::to_string(tokens) +
                     " tokens)";
        return false;
    }
    max_L = static_cast<int>(L.value_or(std::min(cfg.max_positions, tokens)));
    windows = static_cast<int>(n.value_or(8));
    return true;
}

}  // namespace

int cli_fading(int argc, char** argv, int first) {
    if (printed_help(argc, argv, first, kHelp)) return 0;
    CliArgs args;
    std::string error;
    if (!args.parse(argc, argv, first,
                    {"model", "text", "ids", "out", "attention", "max-L", "windows", "seed", "resamples", "threads", "vocab-dir", "shard"},
                    {"needle", "json", "quiet"}, error))
        return fail(error, 2);
    ShardSpec shard;
    if (!read_shard_option(args, shard, error)) return fail(error, 2);
    for (const char* required : {"model", "out"})
        if (!args.value(required)) return fail(std::string("--") + required + " is required\n" + kHelp, 2);
    std::optional<std::int64_t> threads;
    WindowBootstrap boot;
    if (!args.get_int("threads", 1, 1024, threads, error) || !read_bootstrap_options(args, boot, error)) return fail(error, 2);
    if (threads) set_max_threads(static_cast<int>(*threads));
    Checkpoint ck;
    if (!open_checkpoint(*args.value("model"), ck, error)) return fail(error);
    AttentionPlan plan;
    if (!attention_plan_option(args.value("attention"), *ck.decoder, plan, error)) return fail(error, 2);
    TextInput in;
    bool usage = false;
    // Not cut to the context: the windows range over the whole text.
    if (!read_text_input(args, *ck.decoder, 1 << 30, "experiment fading", in, error, usage)) return fail(error, usage ? 2 : 1);
    FadingRun run;
    int windows = 0;
    if (!read_lengths(args, ck.decoder->shape(), static_cast<int>(in.ids.size()), run.max_L, windows, error))
        return fail(error, error.rfind("--", 0) == 0 ? 2 : 1);
    const std::filesystem::path out_dir = *args.value("out");
    if (!make_output_folder(out_dir, error)) return fail(error);

    ShardRun sharded;  // hashing the model costs a read of it: only for a shard or a merge
    if (shard.given || rerunning_from_shards()) {
        sharded = {"fading", sha256_hex(ck.file.bytes()), sha256_hex(in.bytes), attention_spec(plan),
                   shard_run_arguments(argc, argv, first - 1)};
        if (!same_as_merged_shards(sharded, error)) return fail(error);
    }
    ProgressBar bar(args.flag("quiet"));
    const int fading_windows = static_cast<int>(window_offsets(static_cast<int>(in.ids.size()), run.max_L, windows).size());
    const std::unique_ptr<UnitSlice> slice = unit_slice_for(shard, fading_windows);
    if (!run_fading(*ck.decoder, plan, in.ids, windows, slice.get(), bar, run, error)) return fail(error);
    std::optional<NeedleRun> needle;
    std::unique_ptr<UnitSlice> needle_slice;
    if (args.flag("needle")) {
        needle.emplace();
        if (!choose_needle(in.ids, needle->needle, error)) return fail(error);
        // The needle's windows are sliced on their own (the filler is shorter than the text).
        const int longest = std::min(run.max_L, static_cast<int>(needle->needle.filler.size()) + 3);
        needle_slice = unit_slice_for(
            shard, static_cast<int>(window_offsets(static_cast<int>(needle->needle.filler.size()), longest - 3, windows).size()));
        if (!run_needle(*ck.decoder, plan, run.max_L, windows, needle_slice.get(), bar, *needle, error)) return fail(error);
    }
    if (slice && !slice->merging()) {
        if (needle_slice) slice->produced.merge(needle_slice->produced);
        if (!write_records_shard(out_dir, sharded, shard, fading_windows, slice->produced, error)) return fail(error);
        std::printf("fading shard %d/%d: windows %d..%d of %d in %s\n", shard.index, shard.count, slice->first, slice->end, fading_windows,
                    (out_dir / "units.txt").c_str());
        return 0;
    }
    boot.draw(static_cast<int>(run.offsets.size()), 0x46414445 /* "FADE" */);
    const TextTable fading = fading_table(run, plan, boot);
    if (!write_table(out_dir, fading, error)) return fail(error);
    TextTable needle_rows;
    if (needle) {
        WindowBootstrap needle_boot = boot;
        needle_boot.draw(static_cast<int>(needle->offsets.size()), 0x4e45454c /* "NEEL" */);
        needle_rows = needle_table(*needle, needle_boot);
        if (!write_table(out_dir, needle_rows, error)) return fail(error);
    }
    const std::string json_text = summary_json(ck, in, plan, run, fading, needle ? &*needle : nullptr, needle_rows, boot) + "\n";
    if (!write_text_file(out_dir / "fading.json", json_text, error)) return fail(error);
    if (args.flag("json")) {
        std::fputs(json_text.c_str(), stdout);
        return 0;
    }
    print_fading(run);
    if (needle) print_needle(*needle);
    std::printf("fading %.1f s, %zu windows of %d tokens (text: %zu tokens), plan '%s': fading.json fading.csv%s\n", run.seconds,
                run.offsets.size(), run.max_L, in.ids.size(), attention_spec(plan).c_str(), needle ? " needle.csv" : "");
    return 0;
}

}  // namespace attnlab
