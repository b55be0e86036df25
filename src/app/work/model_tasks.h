#pragma once
// The model's long work as Tasks: the forward pass over the text under the attention plan (and
// under the trained plan, for the "before" of the model changes), the text's perplexity after
// each pass, and generation under the plan.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/session.h"

namespace attnlab {

// Called every frame: re-tokenizes the text when it changed (clipped to the model's context, or
// to 1024 tokens without a model), reads view.plan against the model (Session::plan), and starts
// the pass that is missing: first the one under the plan (what the panels show), then the one
// under the trained plan (the baseline), then each one's perplexity. A pass that is already there
// is reused: going back to the trained plan (Reset) runs nothing.
void keep_forward_current(Session& s);

// The model's work is the text's perplexity (and nothing the panels wait for).
bool computing_perplexity(const Session& s);

// The context the text is clipped to: the model's n_positions, or GPT-2's 1024 without a model.
int context_limit(const Session& s);

// Which heads "Apply to the model" changes.
enum class ApplyScope { Head, Layer, All };

// "Apply to the model": the view's normalizer (with its parameter) at the view's T, for the view's
// head, its layer, or every head, on top of the current plan; view.plan is rewritten (relative to
// the trained plan) and keep_forward_current runs the model again. False with a reason when the
// normalizer or T is not valid or there is no model.
bool apply_to_model(Session& s, ApplyScope scope, std::string& error);

// Back to the model as trained (view.plan = "").
void reset_model_changes(Session& s);

// The Cancel button of the model's work. Cancelling the pass for a new plan also takes the plan
// back to the one the panels show (the change is abandoned, not retried every frame).
void cancel_model_work(Session& s);

struct GenerateOptions {
    bool sample = false;       // false: greedy
    float temperature = 1.0f;  // sampling only
    int top_k = 0;             // sampling only; 0 = all tokens
    int count = 20;            // new tokens
    std::uint64_t seed = 0;
};

// What the last generation appended to view.text, for the text panel to outline.
struct GeneratedText {
    std::string prefix;           // view.text before
    std::string continuation;     // the bytes appended
    std::vector<int> ids;         // the tokens generated
    bool stopped_at_end = false;  // the model produced <|endoftext|>
};

// Continues the text by up to options.count tokens; on success the continuation is appended
// to view.text and written to *out. False with a reason when it cannot start.
bool start_generation(Session& s, const GenerateOptions& options, std::shared_ptr<GeneratedText> out, std::string& error);

}  // namespace attnlab
