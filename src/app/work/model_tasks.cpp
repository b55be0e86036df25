#include "app/work/model_tasks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>

#include "app/model_choice.h"
#include "base/random.h"
#include "model/sampling.h"

namespace attnlab {

namespace {

constexpr const char* kForwardLabel = "Forward pass";
constexpr const char* kGenerateLabel = "Generating";
constexpr const char* kPerplexityLabel = "Perplexity of the text";

// Feeds a token sequence to a DecoderState a chunk at a time (the KV cache carries over between
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
    bool step(DecoderState& state, std::span<const int> tokens, std::vector<float>& logits, std::string& error,
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

// Hands a chunked pass to an AttentionCapture (which copies only each call's new rows) and keeps
// the residual stream after the last layer, for the text's perplexity.
class ChunkedCapture final : public AttentionObserver {
public:
    ChunkedCapture(AttentionCapture& capture, std::vector<float>& final_residual) : capture_(capture), final_residual_(final_residual) {}

    void on_layer(const LayerQkv& x) override {
        width_ = x.residual_width();
        capture_.on_layer(x);
    }
    void on_output(int, int n, const float* x) override {
        final_residual_.insert(final_residual_.end(), x, x + static_cast<size_t>(n) * width_);
    }

private:
    AttentionCapture& capture_;
    std::vector<float>& final_residual_;
    int width_ = 0;  // C, from the layers' calls
};

// A pass over the text under one plan, with the capture every panel reads: session.forward when
// it is the session's plan, session.baseline when it is the trained plan (or both).
class PassTask final : public Task {
public:
    PassTask(std::shared_ptr<const LoadedModel> model, std::vector<int> tokens, AttentionPlan plan)
        : model_(std::move(model)),
          state_(model_->model->new_state()),
          result_(std::make_shared<ForwardResult>()),
          collector_(result_->capture, result_->final_residual) {
        result_->capture = AttentionCapture(false, display_storage(static_cast<int>(tokens.size())));
        result_->tokens = std::move(tokens);
        result_->plan = plan;
        state_->plan = std::move(plan);
    }

    bool step() override {
        const std::span<const int> tokens = result_->tokens;
        if (!prefill_.step(*state_, tokens, result_->next_logits, error_, &collector_)) return false;
        report_progress(static_cast<double>(prefill_.done) / static_cast<double>(tokens.size()));
        return !prefill_.finished(tokens);
    }

    void finish(Session& s) override {
        if (!error_.empty()) {
            s.message = "The forward pass failed: " + error_;
            s.failed_pass_tokens = result_->tokens;  // do not retry the same input every frame
            s.failed_pass_plan = result_->plan;
            return;
        }
        if (s.model != model_ || s.tokens != result_->tokens) return;  // the text or the model changed meanwhile
        if (result_->plan == s.plan) s.forward = result_;
        if (result_->plan == model_->model->trained_plan()) s.baseline = result_;
    }

private:
    std::shared_ptr<const LoadedModel> model_;
    std::unique_ptr<DecoderState> state_;
    std::shared_ptr<ForwardResult> result_;
    ChunkedCapture collector_;
    ChunkedPrefill prefill_;
    std::string error_;
};

// The text's perplexity from a finished pass's final residual stream: next_token_nll a block of
// positions per step. The blocks depend on the token count alone (as ChunkedPrefill's), so the
// same pass gives the same bits every time.
class PerplexityTask final : public Task {
public:
    PerplexityTask(std::shared_ptr<const LoadedModel> model, std::shared_ptr<const ForwardResult> pass)
        : model_(std::move(model)), pass_(std::move(pass)) {
        const std::vector<int>& t = pass_->tokens;
        if (t.size() > 1) targets_.assign(t.begin() + 1, t.end());
    }

    bool step() override {
        constexpr int kRows = 32;  // GPT-2 small: 32 x 768 x 50257 multiply-adds, ~0.1 s in the page
        const int total = static_cast<int>(targets_.size()), C = model_->shape.hidden;
        if (done_ >= total) return false;
        const int n = std::min(kRows, total - done_);
        model_->model->nll_from_residual(pass_->final_residual.data() + static_cast<size_t>(done_) * C, n,
                                         std::span<const int>(targets_).subspan(static_cast<size_t>(done_), static_cast<size_t>(n)), nll_);
        for (double v : nll_) sum_ += v;  // in position order: the same sum every time
        done_ += n;
        report_progress(static_cast<double>(done_) / total);
        return done_ < total;
    }

    void finish(Session& s) override {
        auto out = std::make_shared<TextPerplexity>();
        out->pass = pass_;
        out->tokens = static_cast<int>(targets_.size());
        out->mean_nll = out->tokens > 0 ? sum_ / out->tokens : std::nan("");
        out->perplexity = std::exp(out->mean_nll);
        std::erase_if(s.perplexities, [&](const auto& p) {
            const auto pass = p->pass.lock();
            return !pass || (pass != s.forward && pass != s.baseline) || pass == pass_;
        });
        s.perplexities.push_back(std::move(out));
    }

private:
    std::shared_ptr<const LoadedModel> model_;
    std::shared_ptr<const ForwardResult> pass_;
    std::vector<int> targets_;
    std::vector<double> nll_;
    double sum_ = 0;
    int done_ = 0;
};

// Greedy or sampled continuation: prefill the prompt in chunks, then one new token per step.
class GenerateTask final : public Task {
public:
    GenerateTask(std::shared_ptr<const LoadedModel> model, std::string prompt_text, std::vector<int> prompt, int eot,
                 const GenerateOptions& o, int count, std::shared_ptr<GeneratedText> out, AttentionPlan plan)
        : model_(std::move(model)),
          state_(model_->model->new_state()),
          prompt_text_(std::move(prompt_text)),
          prompt_(std::move(prompt)),
          eot_(eot),
          count_(count),
          rng_(o.seed),
          out_(std::move(out)) {
        sampling_.temperature = o.sample ? std::max(o.temperature, 1e-3f) : 0.0f;
        sampling_.top_k = o.sample ? std::max(o.top_k, 0) : 0;
        state_->plan = std::move(plan);  // generation runs the model the panels show
    }

    bool step() override {
        const std::span<const int> prompt = prompt_;
        const double total = static_cast<double>(prompt_.size() + static_cast<size_t>(count_));
        if (!prefill_.finished(prompt)) {
            if (!prefill_.step(*state_, prompt, logits_, error_, nullptr)) return false;
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
        return state_->forward(one, logits_, error_);
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
    std::unique_ptr<DecoderState> state_;
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

int context_limit(const Session& s) { return s.model ? s.model->shape.max_positions : 1024; }

namespace {

// view.plan read against the model, when either changed. A plan that does not fit this model (a
// link made for another) leaves the model as trained, says why, and stays in the view: the
// model it was made for may be on its way.
void keep_plan_current(Session& s) {
    if (s.plan_model == s.model.get() && s.plan_text == s.view.plan) return;
    const bool same_model = s.plan_model == s.model.get();
    s.plan_model = s.model.get();
    s.plan_text = s.view.plan;
    s.plan_error.clear();
    const DecoderModel& m = *s.model->model;
    AttentionPlan plan = m.trained_plan();
    std::string error;
    if (!parse_attention_spec(s.view.plan, s.model->shape.n_layer, s.model->shape.n_head, plan, error)) {
        s.plan_error = "The model changes \"" + s.view.plan + "\" do not fit this model (" + error + "); it runs as trained.";
        s.message = s.plan_error;
        plan = m.trained_plan();
    }
    s.plan = std::move(plan);
    // The selector shows what the open head runs: under a changed plan (a link's, an applied one)
    // its setting; after Reset, the model as trained. A new model as trained keeps the reader's
    // what-if (model_loading decides that).
    if (!(s.plan == m.trained_plan()) || same_model) follow_trained(s.view, s.plan);
}

bool fits(const std::shared_ptr<const ForwardResult>& pass, const std::vector<int>& tokens, const AttentionPlan& plan) {
    return pass && pass->tokens == tokens && pass->plan == plan;
}

// The perplexity of `pass` when it has none yet and the model is free: true when started.
bool start_perplexity(Session& s, const std::shared_ptr<const ForwardResult>& pass) {
    if (!pass || find_perplexity(s, pass)) return false;
    if (s.model_work.busy() && s.model_work.label() == kPerplexityLabel) return true;  // one at a time
    if (s.model_work.busy()) return false;
    s.model_work.start(std::make_unique<PerplexityTask>(s.model, pass), kPerplexityLabel);
    return true;
}

}  // namespace

bool computing_perplexity(const Session& s) { return s.model_work.busy() && s.model_work.label() == kPerplexityLabel; }

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
    keep_plan_current(s);
    if (s.tokens.empty()) {
        s.forward.reset();
        s.baseline.reset();
        s.perplexities.clear();
        return;
    }
    const AttentionPlan& trained = s.model->model->trained_plan();
    // A pass already made serves whichever plan it ran: back to the trained plan is instant.
    if (!fits(s.baseline, s.tokens, trained) && fits(s.forward, s.tokens, trained)) s.baseline = s.forward;
    if (!pass_current(s) && fits(s.baseline, s.tokens, s.plan)) s.forward = s.baseline;
    // Generation finishes by changing the text; a pass started now would only cancel it.
    if (s.model_work.busy() && s.model_work.label().starts_with(kGenerateLabel)) return;
    const AttentionPlan* need = !pass_current(s) ? &s.plan : !fits(s.baseline, s.tokens, trained) ? &trained : nullptr;
    if (!need) {
        if (!start_perplexity(s, s.forward)) start_perplexity(s, s.baseline);
        return;
    }
    const bool running = s.model_work.busy() && s.model_work.label() == kForwardLabel && s.pass_tokens == s.tokens && s.pass_plan == *need;
    if (running || (s.failed_pass_tokens == s.tokens && s.failed_pass_plan == *need)) return;
    s.pass_tokens = s.tokens;
    s.pass_plan = *need;
    s.failed_pass_tokens.clear();
    s.model_work.start(std::make_unique<PassTask>(s.model, s.tokens, *need), kForwardLabel);
}

bool apply_to_model(Session& s, ApplyScope scope, std::string& error) {
    if (!s.model) {
        error = "Load a model first.";
        return false;
    }
    HeadPlan head;
    if (!parse_normalizer(s.view.normalizer, head.normalizer, error)) return false;
    if (!(s.view.T >= kMinHeadT && s.view.T <= kMaxHeadT)) {
        error = "The temperature must be a number from 0.0001 to 10000.";
        return false;
    }
    head.temperature = static_cast<float>(s.view.T);
    keep_plan_current(s);
    const DecoderShape& c = s.model->shape;
    const int layer = std::clamp(s.view.layer, 0, c.n_layer - 1), which = std::clamp(s.view.head, 0, c.n_head - 1);
    AttentionPlan plan = s.plan;
    for (int l = 0; l < c.n_layer; ++l)
        for (int h = 0; h < c.n_head; ++h)
            if (scope == ApplyScope::All || (l == layer && (scope == ApplyScope::Layer || h == which))) plan.set(l, h, head);
    s.view.plan = attention_spec(plan, s.model->model->trained_plan());
    return true;
}

void reset_model_changes(Session& s) { s.view.plan.clear(); }

void cancel_model_work(Session& s) {
    const bool plan_pass =
        s.model_work.busy() && s.model_work.label() == kForwardLabel && s.model && s.pass_plan != s.model->model->trained_plan();
    s.model_work.cancel();
    if (!plan_pass) return;
    // Back to the plan the panels show; with no pass to show, to the model as trained.
    s.view.plan = s.forward ? attention_spec(s.forward->plan, s.model->model->trained_plan()) : "";
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
    s.model_work.start(std::make_unique<GenerateTask>(s.model, s.view.text, std::move(prompt), s.tokenizer.eot_id(), options, count,
                                                      std::move(out), s.plan),
                       label);
    return true;
}

}  // namespace attnlab
