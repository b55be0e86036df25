#pragma once
// What the panels share: the tokenizer, the loaded model, the text's tokens, the last forward
// pass, the view the user is looking at, and the long work in flight. One instance lives in
// AppState; it is read and changed on the UI thread only. Tasks on other threads get their
// inputs by value or as shared_ptr<const ...>, and hand results back through Task::finish.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/normalizers.h"
#include "analysis/selection.h"
#include "app/model_choice.h"
#include "app/view_state.h"
#include "app/work/task_runner.h"
#include "base/safetensors.h"
#include "model/attention_capture.h"
#include "model/decoder.h"
#include "tokenizer/gpt2_tokenizer.h"

namespace attnlab {

// A checkpoint's bytes and whatever keeps them alive (a buffer the page filled, a mapped file).
struct ModelBytes {
    std::shared_ptr<const void> owner;
    std::span<const std::uint8_t> bytes;
};

// A checkpoint's files as they arrived, in one buffer: the weights (one safetensors file, or the
// shards model.safetensors.index.json names) and the text files beside them ("" when absent).
struct ModelFiles {
    ModelBytes bytes;  // the whole buffer
    struct Part {
        std::string name;  // the file's name, as the index names a shard
        std::size_t offset = 0, size = 0;
    };
    // The weights' files inside `bytes`; empty: `bytes` is the one safetensors file.
    std::vector<Part> weights;
    std::string config_json, tokenizer_json, tokenizer_config_json;
    std::string index_json;  // model.safetensors.index.json, when `weights` are its shards
    std::string source;      // a web address, a Hugging Face repository id or a file name

    // What messages call a file of the model: `source` when it names that file, else the file
    // under it ("Qwen/Qwen3-0.6B/model.safetensors").
    std::string file_name(const std::string& name) const;
};

// A model ready to run. Immutable once made; shared with tasks on other threads.
struct LoadedModel {
    ModelBytes bytes;
    SafetensorsReader reader;
    std::unique_ptr<DecoderModel> model;  // GPT-2, or Llama/Qwen2/Qwen3 (config.json's model_type)
    DecoderShape shape;                   // model->shape(), kept
    std::string dtype;                    // the weights' dtype ("F32", "BF16", "F16"; "mixed")
    // The model's own tokenizer.json (with tokenizer_config.json); not loaded when the checkpoint
    // came without one (GPT-2s: the page's built-in vocabulary serves).
    Tokenizer tokenizer;
    std::string source;  // URL or file name, as shown to the reader
    // What the model bar calls it: config.json's optional "attnlab_name" (AttnLab's own models
    // say there what they are, e.g. "AttnLab tiny (...), not GPT-2"); "" = none, show `source`.
    std::string name;
    bool builtin = false;                     // a model shipped with AttnLab (assets/tiny or assets/tiny-ssmax), not one the reader chose
    BuiltinModel which = BuiltinModel::None;  // and which one
    std::vector<std::string> warnings;
};

// Indexes the checkpoint (one file or its shards), binds the weights of the family config.json's
// model_type names (no config.json: GPT-2, its shape inferred) and reads its tokenizer.json. On
// failure returns null and a message that names the file and what is wrong.
std::shared_ptr<const LoadedModel> load_model(ModelFiles files, std::string& error, BuiltinModel builtin = BuiltinModel::None);

// config.json's "attnlab_name" made fit for one line, or "" when absent or not a string.
std::string model_display_name(std::string_view config_json);

// One forward pass over a token sequence.
struct ForwardResult {
    std::vector<int> tokens;
    AttentionCapture capture;        // every layer's Q/K/V, stored as display_storage(tokens.size())
    std::vector<float> next_logits;  // (V): the model's scores for the token after the last
    AttentionPlan plan;              // each head's normalizer and temperature in this pass
    // (L, C): the residual stream after the last layer, before the final layer norm: what the
    // text's perplexity is computed from (next_token_nll), after the pass.
    std::vector<float> final_residual;
};

// The text's perplexity under one pass: the mean over positions 0..L-2 of -ln p(token i+1 |
// tokens 0..i), and its exp, as `attnlab perplexity` reports it.
struct TextPerplexity {
    std::weak_ptr<const ForwardResult> pass;
    int tokens = 0;  // predicted positions: L - 1
    double mean_nll = 0, perplexity = 0;
};

struct HeadSummaries;  // app/work/head_summaries.h: the all-heads summaries

struct Session {
    // GPT-2's vocabulary files (assets/gpt2), as bytes: the vocabulary is built from them only
    // when something needs it (gpt2_vocabulary(Session&)): 100-130 ms of the page's start that a
    // model with its own tokenizer.json never used (bench/RESULTS.md).
    std::string gpt2_encoder_json, gpt2_vocab_bpe;
    Gpt2Tokenizer built_gpt2_vocabulary;  // built from them, once
    std::string tokenizer_error;          // set when it could not be built
    // The text's tokenizer: the loaded model's tokenizer.json when it came with one, else GPT-2's
    // vocabulary (install_model sets it; copies share the tables).
    Tokenizer tokenizer;

    std::shared_ptr<const LoadedModel> model;  // null until a model is loaded
    std::string model_error;                   // the last load failure, shown until the next attempt

    ViewState view;

    std::vector<int> tokens;  // view.text, encoded (clipped to the model's context)
    std::string tokens_text;  // the text `tokens` were made from
    // The attention plan the model runs: view.plan read against the model's trained plan
    // (keep_forward_current). The trained plan when view.plan is "" or does not fit the model;
    // plan_error says why it does not.
    AttentionPlan plan;
    std::string plan_text;                    // the view.plan `plan` was read from
    const LoadedModel* plan_model = nullptr;  // and the model it was read against
    std::string plan_error;

    // The pass over `tokens` under `plan`: what every panel shows. Null before the first, and
    // lagging `tokens` or `plan` while a new pass runs.
    std::shared_ptr<const ForwardResult> forward;
    // The pass over the same tokens with the model's trained plan: the "before" of the model
    // changes. The same object as `forward` when the plan is the trained one, so that a Reset
    // shows the numbers from before at once and bit for bit.
    std::shared_ptr<const ForwardResult> baseline;
    std::vector<int> pass_tokens;         // the tokens of the forward pass in flight (or last started)
    AttentionPlan pass_plan;              // and its plan
    std::vector<int> failed_pass_tokens;  // the tokens and plan whose pass failed: not retried every frame
    AttentionPlan failed_pass_plan;

    // The text's perplexity under `forward` and `baseline` (each computed after its pass).
    std::vector<std::shared_ptr<const TextPerplexity>> perplexities;
    std::shared_ptr<const HeadSummaries> summaries;  // for `forward`, or null while computing

    TaskRunner model_work;  // forward passes, generation, the perplexity
    TaskRunner background;  // the all-heads summaries

    // "Compare with the twin" (view.compare): the other built-in model (AttnLab tiny beside
    // tiny-SSMax, or the reverse), held beside `model` and never replacing it, and its pass over
    // `tokens` under the same model changes (app/work/twin_compare.h). Null until loaded and
    // computed.
    std::shared_ptr<const LoadedModel> twin;
    std::shared_ptr<const ForwardResult> twin_forward;
    // view.plan read against the twin (its trained plan when the plan does not fit it).
    AttentionPlan twin_plan;
    std::string twin_plan_text;
    const LoadedModel* twin_plan_model = nullptr;
    std::string twin_error;  // why the twin is not shown: its load or its pass failed
    TaskRunner twin_work;    // the twin's pass

    std::string message;  // an error or notice for the reader, shown until dismissed
};

// The chosen head and query as the analyses see them: the query's logits over the keys it can
// see (q.k / sqrt(d), positions 0..query), the weights under the view's normalizer and
// temperature, and the head's value vectors for those positions.
struct QuerySlice {
    int layer = 0, head = 0, query = 0;  // query: a position in forward->tokens
    Normalizer normalizer;
    double T = 1.0;
    std::vector<double> logits;   // (query + 1)
    std::vector<double> weights;  // (query + 1)
    RowMatrixXd values;           // (query + 1, head_dim)
};

// False (with a reason for the reader) before the first forward pass, or when the view's
// normalizer name is not one AttnLab knows.
bool chosen_query_slice(const Session& s, QuerySlice& out, std::string& error);
// Its two halves, so that a panel can check its cache (query_key) between them: the place
// (layer, head, query, normalizer, T: cheap), then the row's logits, weights and values (copies
// the head's queries, keys and values out of the capture). fill_query_slice needs a place.
bool chosen_query_place(const Session& s, QuerySlice& out, std::string& error);
bool fill_query_slice(const Session& s, QuerySlice& out, std::string& error);

// What a panel's numbers for the chosen query were computed from. A panel keeps the key of
// what it shows and recomputes when the current key differs; fields it does not depend on are
// left at their defaults on both sides.
struct QueryKey {
    std::weak_ptr<const ForwardResult> pass;  // weak: a new pass at a reused address is still new
    int layer = -1, head = -1, query = -1, N = 0;
    double T = 0, eps = 0;
    std::string normalizer;
};

// The key of the view's chosen query, whose slice is `slice`, without the fields in `ignored`
// (the panel's numbers do not depend on them).
enum QueryKeyField : unsigned { kKeyN = 1u, kKeyT = 2u, kKeyEps = 4u };
QueryKey query_key(const Session& s, const QuerySlice& slice, unsigned ignored = 0);
bool same_query(const QueryKey& a, const QueryKey& b);

// What a panel that follows the view's chosen query shows: the key its numbers were computed
// for, or (ready false) why there are none.
struct ChosenQueryView {
    QueryKey key;
    bool ready = false;
    std::string error = "not drawn yet";
};

// chosen_query_place for such a panel: when there is no place, `view` is cleared and says why.
bool chosen_query_place(const Session& s, QuerySlice& out, ChosenQueryView& view);

// Whether s.forward is the pass of the session's text and plan: false while a newer pass is on
// its way. Work on a pass about to be replaced only slows the new one down (they share the
// cores), so the panels' background work waits for it.
bool pass_current(const Session& s);

// The perplexity computed for `pass`, or null (not yet, or no pass).
const TextPerplexity* find_perplexity(const Session& s, const std::shared_ptr<const ForwardResult>& pass);

// GPT-2's vocabulary, built from s.gpt2_encoder_json and s.gpt2_vocab_bpe on the first call. A
// failure is said once in s.message and kept in s.tokenizer_error; the result is then empty.
const Tokenizer& gpt2_vocabulary(Session& s);

// Picks a head (a click on the head grid, a learned head): the view's layer and head, and its
// normalizer and temperature as the plan runs that head, so that "Apply" starts from what is.
void pick_head(Session& s, int layer, int head);

// The position the view's query points at in `forward` (view.query, -1 = last), clamped.
int chosen_query(const Session& s);

// Keeps view.layer/head/query/N inside the loaded model and the current tokens.
void clamp_view(Session& s);

}  // namespace attnlab
