#pragma once
// The Llama family as Hugging Face defines it (models/llama, qwen2, qwen3 in transformers): RMSNorm
// before attention and MLP, rotary positions (rope_theta, rope_scaling none / linear / llama3),
// grouped-query attention (num_key_value_heads), SwiGLU MLP, an lm_head tied or not. Qwen2 adds
// biases to q, k and v; Qwen3 normalizes each head's q and k (RMSNorm over head_dim) before the
// rotation. The shared parts (attention under a plan, the observer, logits) are model/decoder.h.
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

enum class LlamaArch { Llama, Qwen2, Qwen3 };
const char* arch_name(LlamaArch arch);  // "llama", "qwen2", "qwen3": config.json's model_type

struct RopeScaling {
    enum class Type { None, Linear, Llama3 } type = Type::None;
    double factor = 1.0;
    double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
    int original_max_position_embeddings = 8192;           // llama3
};

struct LlamaConfig {
    LlamaArch arch = LlamaArch::Llama;
    int num_hidden_layers = 2;
    int num_attention_heads = 4;
    int num_key_value_heads = 4;
    int hidden_size = 64;
    int head_dim = 16;
    int intermediate_size = 128;
    int vocab_size = 256;
    int max_position_embeddings = 2048;
    float rms_norm_eps = 1e-6f;
    double rope_theta = 10000.0;
    RopeScaling rope_scaling;
    bool tie_word_embeddings = false;
    bool attention_bias = false;  // q, k, v and o (Qwen2: q, k, v always, o never)
    bool mlp_bias = false;        // Llama only
    std::string attention;        // "attnlab_attention", as in Gpt2Config

    bool qkv_bias() const { return arch == LlamaArch::Qwen2 || attention_bias; }
    bool o_bias() const { return arch != LlamaArch::Qwen2 && attention_bias; }
    bool qk_norm() const { return arch == LlamaArch::Qwen3; }
};

// Reads config.json for model_type llama, qwen2 or qwen3. Anything this engine does not compute
// (another hidden_act, a rope_scaling type, sliding windows) is refused naming the field.
bool parse_llama_config(std::string_view json_text, std::string_view source, LlamaConfig& config, std::string& error);
std::string llama_config_json(const LlamaConfig& config);
// config.json's model_type, "" when it has none or is not JSON.
std::string config_model_type(std::string_view json_text);

// The rotation's inverse frequencies, head_dim / 2 of them, after rope_scaling.
std::vector<double> rope_inverse_frequencies(const LlamaConfig& config);

struct LlamaLayerWeights {
    const float* input_norm;        // (C)
    LinearWeight qkv;               // (C, (H + 2 KV) d): q, k, v side by side
    std::vector<float> qkv_b;       // ((H + 2 KV) d), empty without biases
    const float* q_norm = nullptr;  // (d), Qwen3
    const float* k_norm = nullptr;  // (d), Qwen3
    LinearWeight o;                 // (H d, C)
    const float* o_b = nullptr;     // (C)
    const float* post_norm;         // (C)
    LinearWeight gate, up;          // (C, I)
    const float *gate_b = nullptr, *up_b = nullptr;
    LinearWeight down;  // (I, C)
    const float* down_b = nullptr;
};

class LlamaModel final : public DecoderModel {
public:
    // Binds a checkpoint in the Hugging Face layout (model.layers.N...) through the loaders' one
    // binding (checkpoint_tensors.h): the matrices are views of the checkpoint's bytes, of its
    // type (F16 and BF16 stay 16-bit), nn.Linear's (out, in) read transposed by the kernels
    // (LinearWeight::Part); norms are views when F32. `reader` must outlive the model.
    bool load(const SafetensorsReader& reader, const LlamaConfig& config, std::string& error);

    const LlamaConfig& config() const { return config_; }
    const AttentionPlan& trained_plan() const override { return trained_plan_; }
    std::int64_t parameter_count() const override { return parameter_count_; }
    DecoderShape shape() const override;
    std::unique_ptr<DecoderState> new_state() const override;
    void nll_from_residual(const float* residual, int n, std::span<const int> targets, std::vector<double>& nll) const override;

    WeightMatrix embed;                 // (V, C)
    const float* final_norm = nullptr;  // (C)
    WeightMatrix lm_head;               // (V, C): embed when tied
    std::vector<LlamaLayerWeights> layers;
    std::vector<double> rope_inv_freq;  // (d / 2): rope_inverse_frequencies()

private:
    LlamaConfig config_;
    AttentionPlan trained_plan_;
    std::vector<float> owned_;  // 16-bit vectors and misaligned tensors converted to fp32
    std::int64_t parameter_count_ = 0;
};

class LlamaState final : public DecoderState {
public:
    explicit LlamaState(const LlamaModel& model);
    // As Gpt2State::forward: logits of the last new token (V) or of all (n, V).
    bool forward(std::span<const int> tokens, std::vector<float>& logits, std::string& error, bool all_logits = false,
                 AttentionObserver* observer = nullptr) override;
    bool prefill(std::span<const int> tokens, std::string& error, AttentionObserver* observer = nullptr) override;
    std::unique_ptr<DecoderState> clone() const override { return std::make_unique<LlamaState>(*this); }
    const std::vector<float>& final_hidden() const { return norm_out_; }

private:
    bool run_layers(std::span<const int> tokens, std::string& error, AttentionObserver* observer);
    // The rotation's cos and sin for positions t_..t_ + n - 1, once per call for every layer's q and k.
    void rotary_angles(int n);
    void rotate(float* rows, int n, int heads, int stride) const;  // by rotary_angles(n)'s table

    const LlamaModel& model_;
    int capacity_ = 0;  // cache rows allocated: grown as the sequence grows, never max_position_embeddings up front
    std::vector<std::vector<float>> k_cache_, v_cache_;  // per layer (capacity, KV d)
    std::vector<float> x_, h_, qkv_, q_, attn_out_, gate_, up_, scores_, norm_out_;
    std::vector<float> cos_, sin_;  // (n, head_dim / 2) each: rotary_angles()
};

// As next_token_nll() for GPT-2.
void next_token_nll(const LlamaModel& model, const float* residual, int n, std::span<const int> targets, std::vector<double>& nll);

}  // namespace attnlab
