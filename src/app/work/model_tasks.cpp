#include "app/work/model_tasks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>

#include "base/random.h"
#include "model/sampling.h"

namespace attnlab {

namespace {

constexpr const char* kForwardLabel = "Forward pass";
constexpr const char* kGenerateLabel = "Generating";

// Feeds a token sequence to a Gpt2State a chunk at a time (the KV cache carries over between
// chunks). The chunks depend on the token count alone, never on timing: a chunk's matrix products
// have fewer rows than the whole pass's, which can change a result's last bits, so the same text
// must be cut the same way every time for a pass (and a Reset after a change of the model) to give
// the same numbers. A pass has at most kSteps chunks: every call has a fixed cost (in wasm b is
// packed again for every product, 30-50 ms for GPT-2 small): in 25 ms chunks a 511-token pass of
// GPT-2 small took 11x the whole pass in the page, in 8 chunks 1.21-1.38x (bench/RESULTS.md); a
// 1024-token pass fed 64 tokens a call 1.22x. The single-threaded page repaints between chunks, and
// on a worker thread cancelling and the progress bar wait for one.
constexpr int kSteps = 8;
constexpr int kMinChunk = 16;  // no chunk is shorter (a text under 32 tokens goes in one call)

struct ChunkedPrefill {
    int done = 0, calls = 0;

    // One chunk: the calls cut the text into equal parts (within one token). False with `error`
    // set when the model refused the tokens. Only the last chunk's logits are computed: the
    // earlier ones would be overwritten unread.
    bool step(Gpt2State& state, std::span<const int> tokens, std::vector<float>& logits, std::string& error,
              AttentionObserver* observer) {
        const int total = static_cast<int>(tokens.size());
        const int steps = std::clamp(total / kMinChunk, 1, kSteps);
        const int n = static_cast<int>(static_cast<long long>(total) * (calls + 1) / steps) - done;
        const std::span<const int> part = tokens.subspan(static_cast<size_t>(done), static_cast<size_t>(n));
        const bool last = done + n >= total;
        if (!(last ? state.forward(part, logits, error, false, observer) : state.prefill(part, error, observer))) return false;
        done += n;
        ++calls;
        return true;
    }
    bool finished(std::span<const int> tokens) const { return done >= static_cast<int>(tokens.size()); }
};

// Collects a chunked pass for an AttentionCapture. Gpt2State hands each call's new queries and
// residual rows but the whole key/value cache so far, so forwarding every chunk would copy the
// cache again each time (quadratic in the length). Instead this keeps the queries and residual
// rows as they come and hands the capture one call covering every position at the last chunk.
class ChunkedCapture final : public AttentionObserver {
public:
    ChunkedCapture(AttentionCapture& capture, int total) : capture_(capture), total_(total) {}

    void on_layer(const LayerQkv& x) override {
        if (static_cast<int>(layers_.size()) <= x.layer) layers_.resize(static_cast<size_t>(x.layer) + 1);
        Rows& r = layers_[static_cast<size_t>(x.layer)];
        const size_t values = static_cast<size_t>(x.n) * x.n_head * x.head_dim;
        r.q.insert(r.q.end(), x.q, x.q + values);
        r.residual.insert(r.residual.end(), x.residual, x.residual + values);
        if (x.t0 + x.n < total_) return;
        LayerQkv all = x;  // keys and values: the cache, already every position
        all.t0 = 0;
        all.n = total_;
        all.q = r.q.data();
        all.residual = r.residual.data();
        capture_.on_layer(all);
        r = Rows{};  // the capture has its copy
    }

private:
    struct Rows {
        std::vector<float> q, residual;  // (positions so far, C)
    };
    AttentionCapture& capture_;
    int total_;
    std::vector<Rows> layers_;
};

// A pass over the text: with `capture`, the forward pass every panel reads (session.forward);
// with a temperature override, "apply to the model" (session.probe).
class PassTask final : public Task {
public:
    PassTask(std::shared_ptr<const LoadedModel> model, std::vector<int> tokens, bool capture, AttentionPlan plan,
             int probe_layer, int probe_head, double probe_T)
        : model_(std::move(model)), state_(model_->model), result_(std::make_shared<ForwardResult>()),
          collector_(result_->capture, static_cast<int>(tokens.size())), capture_(capture),
          layer_(probe_layer), head_(probe_head), T_(probe_T) {
        result_->tokens = std::move(tokens);
        result_->plan = plan;
        state_.plan = std::move(plan);
    }

    bool step() override {
        const std::span<const int> tokens = result_->tokens;
        if (!prefill_.step(state_, tokens, result_->next_logits, error_, capture_ ? &collector_ : nullptr)) return false;
        report_progress(static_cast<double>(prefill_.done) / static_cast<double>(tokens.size()));
        return !prefill_.finished(tokens);
    }

    void finish(Session& s) override {
        if (!error_.empty()) {
            s.message = std::string(capture_ ? "The forward pass failed: " : "\"Apply to the model\" failed: ") + error_;
            if (capture_) s.failed_pass_tokens = result_->tokens;  // do not retry the same input every frame
            return;
        }
        if (s.model != model_ || s.tokens != result_->tokens) return;  // the text or the model changed meanwhile
        if (capture_) {
            s.forward = result_;
            return;
        }
        auto probe = std::make_shared<TemperatureProbe>();
        probe->layer = layer_;
        probe->head = head_;
        probe->T = T_;
        probe->tokens = result_->tokens;
        probe->logits = std::move(result_->next_logits);
        s.probe = std::move(probe);
    }

private:
    std::shared_ptr<const LoadedModel> model_;
    Gpt2State state_;
    std::shared_ptr<ForwardResult> result_;
    ChunkedCapture collector_;
    bool capture_;
    int layer_, head_;
    double T_;
    ChunkedPrefill prefill_;
    std::string error_;
};

// Greedy or sampled continuation: prefill the prompt in chunks, then one new token per step.
class GenerateTask final : public Task {
public:
    GenerateTask(std::shared_ptr<const LoadedModel> model, std::string prompt_text, std::vector<int> prompt, int eot,
                 const GenerateOptions& o, int count, std::shared_ptr<GeneratedText> out)
        : model_(std::move(model)), state_(model_->model), prompt_text_(std::move(prompt_text)), prompt_(std::move(prompt)),
          eot_(eot), count_(count), rng_(o.seed), out_(std::move(out)) {
        sampling_.temperature = o.sample ? std::max(o.temperature, 1e-3f) : 0.0f;
        sampling_.top_k = o.sample ? std::max(o.top_k, 0) : 0;
    }

    bool step() override {
        const std::span<const int> prompt = prompt_;
        const double total = static_cast<double>(prompt_.size() + static_cast<size_t>(count_));
        if (!prefill_.finished(prompt)) {
            if (!prefill_.step(state_, prompt, logits_, error_, nullptr)) return false;
            report_progress(prefill_.done / total);
            return true;
        }
        // logits_ are the scores of the token after everything fed so far.
        const int next = sample_token(logits_, sampling_, rng_.uniform());
        if (next == eot_) {
            ended_ = true;
            return false;
        }
        ids_.push_back(next);
        report_progress((prefill_.done + static_cast<double>(ids_.size())) / total);
        if (static_cast<int>(ids_.size()) >= count_) return false;
        const int one[1] = {next};
        return state_.forward(one, logits_, error_);
    }

    void finish(Session& s) override {
        if (!error_.empty()) {
            s.message = "Generation failed: " + error_;
            return;
        }
        if (s.view.text != prompt_text_) {
            s.message = "The text changed while generating; the continuation was dropped.";
            return;
        }
        out_->prefix = prompt_text_;
        out_->continuation = s.tokenizer.decode(ids_);
        out_->ids = ids_;
        out_->stopped_at_end = ended_;
        s.view.text += out_->continuation;
    }

private:
    std::shared_ptr<const LoadedModel> model_;
    Gpt2State state_;
    std::string prompt_text_;
    std::vector<int> prompt_;
    int eot_;
    int count_;
    SplitMix64 rng_;
    SamplingOptions sampling_;
    std::shared_ptr<GeneratedText> out_;
    ChunkedPrefill prefill_;
    std::vector<float> logits_;
    std::vector<int> ids_;
    bool ended_ = false;
    std::string error_;
};

}  // namespace

int context_limit(const Session& s) { return s.model ? s.model->model.config().n_positions : 1024; }

void keep_forward_current(Session& s) {
    if (s.view.text != s.tokens_text) {
        std::vector<int> tokens;
        if (s.tokenizer.loaded()) tokens = s.tokenizer.encode(s.view.text);
        const size_t limit = static_cast<size_t>(context_limit(s));
        if (tokens.size() > limit) tokens.resize(limit);  // the text panel says so next to the counter
        s.tokens = std::move(tokens);
        s.tokens_text = s.view.text;
    }
    if (!s.model) return;
    if (s.tokens.empty()) {
        if (s.forward) {
            s.forward.reset();
            s.probe.reset();
        }
        return;
    }
    if (s.forward && s.forward->tokens == s.tokens) return;
    // Generation finishes by changing the text; a pass started now would only cancel it.
    if (s.model_work.busy() && s.model_work.label().starts_with(kGenerateLabel)) return;
    const bool running = s.model_work.busy() && s.model_work.label() == kForwardLabel && s.pass_tokens == s.tokens;
    if (running || s.failed_pass_tokens == s.tokens) return;
    s.pass_tokens = s.tokens;
    s.failed_pass_tokens.clear();
    s.probe.reset();
    const Gpt2Config& c = s.model->model.config();
    s.model_work.start(std::make_unique<PassTask>(s.model, s.tokens, true, AttentionPlan(c.n_layer, c.n_head), 0, 0, 1.0), kForwardLabel);
}

bool start_probe(Session& s, std::string& error) {
    if (!s.model) {
        error = "Load a model first.";
        return false;
    }
    if (!s.forward || s.forward->tokens != s.tokens) {
        error = "Wait for the forward pass over the text to finish.";
        return false;
    }
    if (!(s.view.T > 0.0) || !std::isfinite(s.view.T)) {
        error = "The temperature must be a positive number.";
        return false;
    }
    const Gpt2Config& c = s.model->model.config();
    const int layer = std::clamp(s.view.layer, 0, c.n_layer - 1), head = std::clamp(s.view.head, 0, c.n_head - 1);
    AttentionPlan t(c.n_layer, c.n_head);
    t.set(layer, head, HeadPlan{Normalizer{}, static_cast<float>(s.view.T)});
    char label[96];
    std::snprintf(label, sizeof label, "Apply to the model: layer %d, head %d at T = %.3g", layer, head, s.view.T);
    s.model_work.start(std::make_unique<PassTask>(s.model, s.forward->tokens, false, std::move(t), layer, head, s.view.T), label);
    return true;
}

bool start_generation(Session& s, const GenerateOptions& options, std::shared_ptr<GeneratedText> out, std::string& error) {
    if (!s.model) {
        error = "Load a model first.";
        return false;
    }
    if (!s.tokenizer.loaded()) {
        error = "The GPT-2 vocabulary is not loaded.";
        return false;
    }
    std::vector<int> prompt = s.tokenizer.encode(s.view.text);
    const int limit = context_limit(s);
    // An empty text starts from <|endoftext|>, as GPT-2's unconditional samples do.
    if (prompt.empty()) prompt.push_back(s.tokenizer.eot_id());
    const int room = limit - static_cast<int>(prompt.size());
    if (room <= 0) {
        error = "The text already fills the model's context of " + std::to_string(limit) + " tokens.";
        return false;
    }
    const int count = std::min(std::max(options.count, 1), room);
    char label[64];
    std::snprintf(label, sizeof label, "%s %d tokens", kGenerateLabel, count);
    s.model_work.start(std::make_unique<GenerateTask>(s.model, s.view.text, std::move(prompt), s.tokenizer.eot_id(), options,
                                                      count, std::move(out)),
                       label);
    return true;
}

}  // namespace attnlab
