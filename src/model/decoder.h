#pragma once
// What every decoder family shares (GPT-2, Llama, Qwen2, Qwen3): the observer through which the
// analyses see attention, causal attention under an AttentionPlan, and the logits and
// next-token log-likelihood from the last hidden state. A family's file holds only its own
// forward pass (embeddings, norms, projections, MLP) and calls these (docs/architecture.md).
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/attention_plan.h"
#include "model/weight_matrix.h"

namespace attnlab {

// What a layer's attention saw, handed to an observer. Pointers are valid during the call.
struct LayerQkv {
    int layer;
    int t0;  // position of the first new token
    int n;   // new tokens in this call
    int n_head;
    int head_dim;
    const float* residual;  // (n, n_head * head_dim): the layer's input, the residual stream before ln_1
    const float* q;         // (n, n_head, head_dim): this call's queries (after rotation, where the model rotates)
    const float* k;         // (t0 + n, n_head, head_dim): every key so far (the cache)
    const float* v;         // (t0 + n, n_head, head_dim)
    // Key/value heads: n_head / n_kv_head query heads share one (grouped-query attention); k and
    // v are then (t0 + n, n_kv_head, head_dim). 0 = n_head (GPT-2).
    int n_kv_head = 0;
    int kv_heads() const { return n_kv_head > 0 ? n_kv_head : n_head; }
    // The residual stream's width; 0 = n_head * head_dim (GPT-2; Qwen3's heads can be wider).
    int hidden = 0;
    int residual_width() const { return hidden > 0 ? hidden : n_head * head_dim; }
};

// One head's attention for this call's queries.
struct HeadAttention {
    int layer, head, t0, n;
    int t_total;           // t0 + n keys
    HeadPlan plan;         // the normalizer and temperature it ran (softmax at T = 1 = GPT-2)
    const float* scores;   // (n, t_total): q.k / sqrt(d), -inf above the diagonal
    const float* weights;  // (n, t_total): the plan's normalizer of the visible scores, 0 above the diagonal
};

class AttentionObserver {
public:
    virtual ~AttentionObserver() = default;
    virtual void on_layer(const LayerQkv& qkv) = 0;
    // Heads for which on_head is called (checked once per layer and head).
    virtual bool wants_head(int /*layer*/, int /*head*/) const { return false; }
    virtual void on_head(const HeadAttention& /*attention*/) {}
    // The residual stream after the last layer, before the final layer norm, for this call's new
    // tokens: (n, C), positions t0.. (next_token_nll() turns it into the text's log-likelihood).
    virtual void on_output(int /*t0*/, int /*n*/, const float* /*x*/) {}
};

// Columns c0..c0 + width - 1 of every row: x (n, cols) += y (n, cols).
void add_columns(float* x, const float* y, int n, int cols, int c0, int width);
// out = LayerNorm(in) row by row, in double; in, out: (n, C).
void layer_norm(const float* in, float* out, int n, int C, const float* w, const float* b, float eps);
// out = w * in / sqrt(mean(in^2) + eps) row by row (RMSNorm), the mean in double; in, out: (n, C).
void rms_norm(const float* in, float* out, int n, int C, const float* w, float eps);

// One layer's causal attention for this call's n queries at positions t0..t0 + n - 1, every
// query head h reading key/value head h / (n_head / n_kv_head). Rows have strides: q (n rows),
// k and v (t0 + n rows, the cache), out (n rows); head h's columns start at h * head_dim.
struct CausalAttention {
    int layer, t0, n, n_head, n_kv_head, head_dim;
    const float* q;
    int q_stride;
    const float* k;
    const float* v;
    int kv_stride;
    float* out;
    int out_stride;
};

// out = the plan's normalizer of q k^T / sqrt(head_dim) per head, times v; calls the
// observer's on_head for the heads it wants. scratch is reused between calls. Bits do not
// depend on the thread count.
void causal_attention(const CausalAttention& a, const AttentionPlan& plan, AttentionObserver* observer, std::vector<float>& scratch);

// logits (rows, V) = hidden (rows, C) @ head^T, head (V, C), in slices of the vocabulary spread
// over the threads.
void logits_from_hidden(const float* hidden, int rows, int C, WeightMatrix head, int V, float* logits);

// The final norm of a family: out (n, C) = norm(in (n, C)).
using FinalNorm = std::function<void(const float* in, float* out, int n)>;

// -ln p(targets[i] | ...) for n positions whose residual stream after the last layer is
// `residual` (n, C): final_norm, the logits a block of rows at a time (never n x V at once), and
// log-softmax in double. A target < 0 gives NaN. Bits do not depend on the thread count.
void next_token_nll_from(const FinalNorm& final_norm, WeightMatrix head, int C, int V, const float* residual, int n,
                         std::span<const int> targets, std::vector<double>& nll);

// The checks every family's forward pass makes before consuming anything: tokens not empty, the
// plan of the model's shape, t0 + n within `max_positions` (named `positions_field` in the error),
// ids inside the vocabulary. False with a message otherwise.
bool check_new_tokens(std::span<const int> tokens, const AttentionPlan& plan, int n_layer, int n_head, int t0, int max_positions,
                      const char* positions_field, int vocab, std::string& error);

// config.json's "attnlab_attention" (the plan a model was trained with), if `plan_text` is there:
// into `spec` in its canonical text. `where` names the file in errors.
bool read_trained_attention(const std::string* plan_text, bool is_string, const std::string& where, int n_layer, int n_head,
                            std::string& spec, std::string& error);

// The shape every family has, in the names the analyses use.
struct DecoderShape {
    std::string arch;  // config.json's model_type: "gpt2", "llama", "qwen2", "qwen3"
    int n_layer, n_head, n_kv_head, head_dim;
    int hidden;  // the residual stream's width
    int vocab;
    int max_positions;  // n_positions / max_position_embeddings
};

// One sequence running through a model: its KV cache and scratch. What the CLI commands and
// experiments hold, whatever the family.
class DecoderState {
public:
    virtual ~DecoderState() = default;
    // The new tokens after the length() already seen; logits of the last (V) or of every new
    // token ((n, V)). False with a message for bad ids or a sequence past the model's positions.
    virtual bool forward(std::span<const int> tokens, std::vector<float>& logits, std::string& error, bool all_logits = false,
                         AttentionObserver* observer = nullptr) = 0;
    // forward() without the final norm and the logits.
    virtual bool prefill(std::span<const int> tokens, std::string& error, AttentionObserver* observer = nullptr) = 0;
    virtual std::unique_ptr<DecoderState> clone() const = 0;  // the cache too
    int length() const { return t_; }                         // the tokens seen, whose keys and values are cached
    void reset() { t_ = 0; }
    AttentionPlan& attention_plan() { return plan; }

    // Each head's normalizer and temperature, from the next forward() on: the model's trained plan
    // until set. A plan of another shape than the model's is refused by forward().
    AttentionPlan plan;

protected:
    explicit DecoderState(AttentionPlan trained) : plan(std::move(trained)) {}
    int t_ = 0;
};

class DecoderModel {
public:
    virtual ~DecoderModel() = default;
    virtual DecoderShape shape() const = 0;
    virtual const AttentionPlan& trained_plan() const = 0;
    virtual std::int64_t parameter_count() const = 0;
    virtual std::unique_ptr<DecoderState> new_state() const = 0;
    // -ln p(targets[i] | ...) from the residual stream after the last layer (AttentionObserver::on_output).
    virtual void nll_from_residual(const float* residual, int n, std::span<const int> targets, std::vector<double>& nll) const = 0;
};

}  // namespace attnlab
