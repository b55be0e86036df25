#pragma once
// GPT-2, as in the Hugging Face implementation, in fp32 with Eigen: prefill a prompt, then
// decode token by token with a KV cache. The matrices (wte, wpe, lm_head and each layer's four)
// are views into the checkpoint's bytes, of its type: F16 and BF16 stay 16-bit in memory and
// the kernels widen them as they read them (model/weight_matrix.h), so a model takes about its
// file's size. The vectors (layer norms, biases) are views when F32 and fp32 copies otherwise.
//
// What the paper needs comes out through AttentionObserver: per layer the queries, keys and
// values, and on request one head's pre-softmax scores and weights. Each head runs the normalizer
// and temperature its AttentionPlan gives (model/attention_plan.h), inside the forward pass:
// the later layers see what the swapped heads computed.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/safetensors.h"
#include "model/attention_plan.h"
#include "model/decoder.h"
#include "model/linear.h"

namespace attnlab {

struct Gpt2Config {
    int n_layer = 12;
    int n_head = 12;
    int n_embd = 768;
    int n_positions = 1024;
    int vocab_size = 50257;
    float layer_norm_epsilon = 1e-5f;
    // config.json's "attnlab_attention": the attention plan the model was trained with, in the
    // plan's text form (model/attention_plan.h); "" = softmax everywhere, as GPT-2.
    std::string attention;

    int head_dim() const { return n_embd / n_head; }
};

// Reads the Hugging Face config.json fields AttnLab uses. `source` names the file in errors.
bool parse_gpt2_config(std::string_view json_text, std::string_view source, Gpt2Config& config, std::string& error);
// The config.json Hugging Face writes for `config` (the fields above, model_type "gpt2").
std::string gpt2_config_json(const Gpt2Config& config);

// One layer's parameters. Conv1D layout: weights are (in, out), applied as x @ W + b; the four
// matrices are prepared for their products when the model loads (model/linear.h).
struct Gpt2LayerWeights {
    const float* ln_1_w;      // (C)
    const float* ln_1_b;      // (C)
    LinearWeight c_attn;      // (C, 3C): q, k, v side by side
    const float* c_attn_b;    // (3C)
    LinearWeight c_proj;      // (C, C)
    const float* c_proj_b;    // (C)
    const float* ln_2_w;      // (C)
    const float* ln_2_b;      // (C)
    LinearWeight fc;          // (C, 4C)
    const float* fc_b;        // (4C)
    LinearWeight mlp_proj;    // (4C, C)
    const float* mlp_proj_b;  // (C)
};

struct Gpt2Weights {
    WeightMatrix wte;  // (V, C) token embeddings, also the output projection when tied
    WeightMatrix wpe;  // (n_positions, C)
    std::vector<Gpt2LayerWeights> layers;
    const float* ln_f_w;   // (C)
    const float* ln_f_b;   // (C)
    WeightMatrix lm_head;  // (V, C): wte unless the checkpoint has its own
};

class Gpt2Model final : public DecoderModel {
public:
    // Binds the model to a checkpoint. `reader` and the bytes under it must outlive the model.
    // `config` comes from config.json when there is one; pass nullptr to infer it from the tensor
    // shapes (n_head = n_embd / 64, with a warning). Tensor names may carry "transformer.".
    bool load(const SafetensorsReader& reader, const Gpt2Config* config, std::string& error, std::vector<std::string>* warnings = nullptr);

    const Gpt2Config& config() const { return config_; }
    // The plan the model was trained with (config.attention): what a Gpt2State starts from.
    const AttentionPlan& trained_plan() const override { return trained_plan_; }
    const Gpt2Weights& weights() const { return w_; }
    std::int64_t parameter_count() const override { return parameter_count_; }

    DecoderShape shape() const override;
    std::unique_ptr<DecoderState> new_state() const override;
    void nll_from_residual(const float* residual, int n, std::span<const int> targets, std::vector<double>& nll) const override;

private:
    Gpt2Config config_;
    AttentionPlan trained_plan_;
    Gpt2Weights w_{};
    std::vector<float> owned_;  // 16-bit vectors and misaligned tensors converted to fp32
    std::int64_t parameter_count_ = 0;
};

// The running state of one sequence: KV cache and scratch space.
class Gpt2State final : public DecoderState {
public:
    explicit Gpt2State(const Gpt2Model& model);

    // Runs the new tokens through the model after the `length()` already seen. Writes the
    // logits of the last new token into `logits` (V floats), or of every new token when
    // all_logits is set ((n, V) floats). Returns false with a message for ids outside the
    // vocabulary or a sequence longer than n_positions (nothing is consumed then).
    bool forward(std::span<const int> tokens, std::vector<float>& logits, std::string& error, bool all_logits = false,
                 AttentionObserver* observer = nullptr) override;
    // forward() without the final layer norm and the logits: for the chunks of a prefill that are
    // not its last, where reading the 154 MB lm_head of GPT-2 small for logits nobody reads was
    // a fixed cost of every chunk.
    bool prefill(std::span<const int> tokens, std::string& error, AttentionObserver* observer = nullptr) override;
    std::unique_ptr<DecoderState> clone() const override { return std::make_unique<Gpt2State>(*this); }

    // The last forward()'s final layer-norm output, (n, C), for checks against references.
    const std::vector<float>& final_hidden() const { return ln_f_out_; }

private:
    // The layers over the new tokens: x_ holds their residual stream after the last layer.
    bool run_layers(std::span<const int> tokens, std::string& error, AttentionObserver* observer);

    const Gpt2Model& model_;
    std::vector<float> k_cache_, v_cache_;                                    // (n_layer, n_positions, C)
    std::vector<float> x_, h_, qkv_, q_, attn_out_, fc_, scores_, ln_f_out_;  // scratch
};

// -ln p(targets[i] | the tokens up to position i), for n positions whose residual stream after the
// last layer is `residual` (n, C) (AttentionObserver::on_output): the final layer norm, the logits
// a block of rows at a time (never all n x V at once), and log-softmax in double. A target < 0
// gives NaN. nll gets n values. Bits do not depend on the thread count.
void next_token_nll(const Gpt2Model& model, const float* residual, int n, std::span<const int> targets, std::vector<double>& nll);

}  // namespace attnlab
