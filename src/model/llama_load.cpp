// config.json and safetensors checkpoints of the Llama family (llama, qwen2, qwen3) in the Hugging
// Face layout, bound to LlamaModel.
#include <cmath>
#include <cstdio>

#include "base/json.h"
#include "model/checkpoint_tensors.h"
#include "model/llama.h"

namespace attnlab {

namespace {

constexpr double kPi = 3.14159265358979323846;

// rope_scaling (or, as transformers 5 writes config.json, rope_parameters): null, or
// {"rope_type" (or "type"): "default" | "linear" | "llama3", ...}; no type is "default", as
// Hugging Face reads it. `field` names it in errors; a "rope_theta" inside it wins over the
// top-level one (modeling_rope_utils: rope_parameters.setdefault("rope_theta", ...)).
bool parse_rope_scaling(const json::Value& v, const std::string& where, const std::string& field, RopeScaling& out, double& theta,
                        std::string& error) {
    out = RopeScaling{};
    if (v.is_null()) return true;
    if (!v.is_object()) {
        error = where + ": \"" + field + "\" must be null or an object; supported rope types: default, linear, llama3";
        return false;
    }
    const json::Value* type = v.find("rope_type");
    if (!type) type = v.find("type");
    if (type && !type->is_string()) {
        error = where + ": \"" + field + ".rope_type\" must be a string; supported: default, linear, llama3";
        return false;
    }
    if (const json::Value* inner = v.find("rope_theta")) {
        if (!inner->is_number() || !(inner->as_number() > 0.0)) {
            error = where + ": \"" + field + ".rope_theta\" must be a positive number";
            return false;
        }
        theta = inner->as_number();
    }
    if (const json::Value* prf = v.find("partial_rotary_factor"); prf && !(prf->is_number() && prf->as_number() == 1.0)) {
        error = where + ": \"" + field + ".partial_rotary_factor\" other than 1 is not supported; supported: 1 (every dimension rotates)";
        return false;
    }
    const std::string t = type ? type->as_string() : "default";
    const auto number = [&](const char* key, double& to, bool required) {
        const json::Value* f = v.find(key);
        if (!f) {
            if (required) error = where + ": \"" + field + "\" " + t + " needs \"" + key + "\"";
            return !required;
        }
        if (!f->is_number() || !(f->as_number() > 0.0)) {
            error = where + ": \"" + field + "." + key + "\" must be a positive number";
            return false;
        }
        to = f->as_number();
        return true;
    };
    if (t == "default") return true;
    if (t == "linear") {
        out.type = RopeScaling::Type::Linear;
        return number("factor", out.factor, true);
    }
    if (t == "llama3") {
        out.type = RopeScaling::Type::Llama3;
        double original = 0.0;
        if (!number("factor", out.factor, true) || !number("low_freq_factor", out.low_freq_factor, true) ||
            !number("high_freq_factor", out.high_freq_factor, true) || !number("original_max_position_embeddings", original, true))
            return false;
        out.original_max_position_embeddings = static_cast<int>(original);
        if (!(out.high_freq_factor > out.low_freq_factor)) {
            error = where + ": \"" + field + "\" llama3 needs high_freq_factor > low_freq_factor";
            return false;
        }
        return true;
    }
    error = where + ": \"" + field + ".rope_type\" \"" + t + "\" is not supported; supported: null, default, linear, llama3";
    return false;
}

}  // namespace

const char* arch_name(LlamaArch arch) { return arch == LlamaArch::Qwen2 ? "qwen2" : arch == LlamaArch::Qwen3 ? "qwen3" : "llama"; }

std::string config_model_type(std::string_view json_text) {
    const json::ParseResult parsed = json::parse(json_text);
    if (!parsed.value || !parsed.value->is_object()) return "";
    const json::Value* t = parsed.value->find("model_type");
    return t && t->is_string() ? t->as_string() : "";
}

bool parse_llama_config(std::string_view json_text, std::string_view source, LlamaConfig& config, std::string& error) {
    const std::string where(source);
    const json::ParseResult parsed = json::parse(json_text);
    if (!parsed.value || !parsed.value->is_object()) {
        error = where + ": not a JSON object" + (parsed.value ? "" : " (" + parsed.error + ")");
        return false;
    }
    const json::Value& root = *parsed.value;
    LlamaConfig c;
    const json::Value* type = root.find("model_type");
    const std::string t = type && type->is_string() ? type->as_string() : "";
    if (t == "llama") c.arch = LlamaArch::Llama;
    else if (t == "qwen2") c.arch = LlamaArch::Qwen2;
    else if (t == "qwen3") c.arch = LlamaArch::Qwen3;
    else {
        error = where + ": \"model_type\" \"" + t + "\" is not supported; supported: gpt2, llama, qwen2, qwen3";
        return false;
    }
    if (c.arch != LlamaArch::Llama) c.max_position_embeddings = 32768;
    const auto get_int = [&](const char* key, int lo, int hi, int& out, bool required) {
        return config_int(root, where, key, nullptr, lo, hi, out, required, error);
    };
    const auto get_bool = [&](const char* key, bool& out) {
        const json::Value* v = root.find(key);
        if (!v) return true;
        if (!v->is_bool()) {
            error = where + ": \"" + key + "\" must be true or false";
            return false;
        }
        out = v->as_bool();
        return true;
    };
    const auto get_positive = [&](const char* key, double& out) {
        const json::Value* v = root.find(key);
        if (!v) return true;
        if (!v->is_number() || !(v->as_number() > 0.0)) {
            error = where + ": \"" + key + "\" must be a positive number";
            return false;
        }
        out = v->as_number();
        return true;
    };
    if (!get_int("num_hidden_layers", 1, 1024, c.num_hidden_layers, true) ||
        !get_int("num_attention_heads", 1, 1024, c.num_attention_heads, true) || !get_int("hidden_size", 1, 1 << 16, c.hidden_size, true) ||
        !get_int("intermediate_size", 1, 1 << 18, c.intermediate_size, true) || !get_int("vocab_size", 1, 1 << 22, c.vocab_size, true) ||
        !get_int("max_position_embeddings", 1, 1 << 22, c.max_position_embeddings, false))
        return false;
    // Hugging Face's defaults when a field is absent: LlamaConfig's num_key_value_heads is the heads
    // and head_dim hidden / heads; Qwen2Config and Qwen3Config default num_key_value_heads to 32
    // (null: the heads), and Qwen3Config head_dim to 128.
    const json::Value* kv = root.find("num_key_value_heads");
    c.num_key_value_heads = c.arch != LlamaArch::Llama && !kv ? 32 : c.num_attention_heads;
    c.head_dim = c.arch == LlamaArch::Qwen3 ? 128 : c.hidden_size / c.num_attention_heads;
    if (!get_int("num_key_value_heads", 1, 1024, c.num_key_value_heads, false) || !get_int("head_dim", 2, 4096, c.head_dim, false))
        return false;
    double eps = 1e-6;
    if (!get_positive("rms_norm_eps", eps) || !get_positive("rope_theta", c.rope_theta)) return false;
    c.rms_norm_eps = static_cast<float>(eps);
    // mlp_bias exists for Llama only: Qwen2's and Qwen3's MLPs never have biases, whatever the file says.
    if (!get_bool("tie_word_embeddings", c.tie_word_embeddings) || !get_bool("attention_bias", c.attention_bias) ||
        (c.arch == LlamaArch::Llama && !get_bool("mlp_bias", c.mlp_bias)))
        return false;
    if (c.num_attention_heads % c.num_key_value_heads != 0) {
        error = where + ": \"num_attention_heads\" " + std::to_string(c.num_attention_heads) +
                " is not a multiple of \"num_key_value_heads\" " + std::to_string(c.num_key_value_heads);
        return false;
    }
    if (c.head_dim % 2 != 0) {
        error = where + ": \"head_dim\" " + std::to_string(c.head_dim) + " must be even (rotary positions pair its halves)";
        return false;
    }
    if (const json::Value* act = root.find("hidden_act"); act && !(act->is_string() && act->as_string() == "silu")) {
        error = where + ": \"hidden_act\" " + (act->is_string() ? "\"" + act->as_string() + "\"" : "of the wrong type") +
                " is not supported; supported: \"silu\"";
        return false;
    }
    if (const json::Value* sw = root.find("use_sliding_window"); sw && !(sw->is_bool() && !sw->as_bool())) {
        error = where + ": \"use_sliding_window\" true is not supported; supported: false (full causal attention)";
        return false;
    }
    if (const json::Value* pt = root.find("pretraining_tp"); pt && !(pt->as_int(0, 1))) {
        error = where + ": \"pretraining_tp\" other than 1 is not supported; supported: 1";
        return false;
    }
    if (const json::Value* prf = root.find("partial_rotary_factor"); prf && !(prf->is_number() && prf->as_number() == 1.0)) {
        error = where + ": \"partial_rotary_factor\" other than 1 is not supported; supported: 1 (every dimension rotates)";
        return false;
    }
    // rope_scaling when it is there and not null, else transformers 5's rope_parameters.
    const json::Value* rope = root.find("rope_scaling");
    const char* rope_field = "rope_scaling";
    if (!rope || rope->is_null()) {
        rope = root.find("rope_parameters");
        rope_field = "rope_parameters";
    }
    if (rope && !parse_rope_scaling(*rope, where, rope_field, c.rope_scaling, c.rope_theta, error)) return false;
    if (const json::Value* types = root.find("layer_types")) {
        for (const json::Value& layer : types->items())
            if (!(layer.is_string() && layer.as_string() == "full_attention")) {
                error =
                    where + ": \"layer_types\" other than \"full_attention\" (sliding windows) is not supported; supported: full_attention";
                return false;
            }
    }
    if (const json::Value* plan = root.find("attnlab_attention");
        plan && !read_trained_attention(&plan->as_string(), plan->is_string(), where, c.num_hidden_layers, c.num_attention_heads,
                                        c.attention, error))
        return false;
    config = c;
    return true;
}

std::string llama_config_json(const LlamaConfig& c) {
    json::ObjectBuilder o;
    o.add("model_type", arch_name(c.arch)).add("hidden_act", "silu");
    o.add("num_hidden_layers", c.num_hidden_layers).add("num_attention_heads", c.num_attention_heads);
    o.add("num_key_value_heads", c.num_key_value_heads).add("hidden_size", c.hidden_size).add("head_dim", c.head_dim);
    o.add("intermediate_size", c.intermediate_size).add("vocab_size", c.vocab_size);
    o.add("max_position_embeddings", c.max_position_embeddings);
    o.add("rms_norm_eps", static_cast<double>(c.rms_norm_eps)).add("rope_theta", c.rope_theta);
    const RopeScaling& r = c.rope_scaling;
    if (r.type == RopeScaling::Type::None) o.add_raw("rope_scaling", "null");
    else {
        json::ObjectBuilder s;
        s.add("rope_type", r.type == RopeScaling::Type::Linear ? "linear" : "llama3").add("factor", r.factor);
        if (r.type == RopeScaling::Type::Llama3)
            s.add("low_freq_factor", r.low_freq_factor)
                .add("high_freq_factor", r.high_freq_factor)
                .add("original_max_position_embeddings", r.original_max_position_embeddings);
        o.add_raw("rope_scaling", s.str());
    }
    o.add("tie_word_embeddings", c.tie_word_embeddings).add("attention_bias", c.attention_bias).add("mlp_bias", c.mlp_bias);
    if (!c.attention.empty()) o.add("attnlab_attention", c.attention);
    return o.str() + "\n";
}

std::vector<double> rope_inverse_frequencies(const LlamaConfig& c) {
    const int half = c.head_dim / 2;
    std::vector<double> inv(static_cast<size_t>(half));
    for (int i = 0; i < half; ++i) inv[static_cast<size_t>(i)] = 1.0 / std::pow(c.rope_theta, 2.0 * i / c.head_dim);
    const RopeScaling& r = c.rope_scaling;
    if (r.type == RopeScaling::Type::Linear)
        for (double& f : inv) f /= r.factor;
    if (r.type == RopeScaling::Type::Llama3) {
        // Long wavelengths are stretched by factor, short ones kept, the band between blended.
        const double low_wavelen = r.original_max_position_embeddings / r.low_freq_factor;
        const double high_wavelen = r.original_max_position_embeddings / r.high_freq_factor;
        for (double& f : inv) {
            const double wavelen = 2.0 * kPi / f;
            if (wavelen > low_wavelen) f /= r.factor;
            else if (wavelen >= high_wavelen) {
                const double smooth =
                    (r.original_max_position_embeddings / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
                f = (1.0 - smooth) * f / r.factor + smooth * f;
            }
        }
    }
    return inv;
}

bool LlamaModel::load(const SafetensorsReader& reader, const LlamaConfig& config, std::string& error) {
    const std::string& src = reader.source();
    const LlamaConfig& c = config;
    const std::int64_t C = c.hidden_size, V = c.vocab_size, H = c.num_attention_heads, KV = c.num_key_value_heads, d = c.head_dim,
                       I = c.intermediate_size;
    TensorBinding binding(reader, " from config.json",
                          std::string(" (a ") + arch_name(c.arch) + " checkpoint in the Hugging Face layout has it)");
    // Each layer's nn.Linear weights (out, in) and biases, until they become LinearWeights below.
    struct LayerParts {
        WeightMatrix q, k, v, o, gate, up, down;
        const float *q_b = nullptr, *k_b = nullptr, *v_b = nullptr;
    };
    std::vector<LayerParts> parts(static_cast<size_t>(c.num_hidden_layers));
    binding.matrix("model.embed_tokens.weight", {V, C}, &embed);
    layers.assign(static_cast<size_t>(c.num_hidden_layers), LlamaLayerWeights{});
    for (int l = 0; l < c.num_hidden_layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        LlamaLayerWeights& L = layers[static_cast<size_t>(l)];
        LayerParts& m = parts[static_cast<size_t>(l)];
        binding.vector(p + "input_layernorm.weight", {C}, &L.input_norm);
        binding.matrix(p + "self_attn.q_proj.weight", {H * d, C}, &m.q);
        binding.matrix(p + "self_attn.k_proj.weight", {KV * d, C}, &m.k);
        binding.matrix(p + "self_attn.v_proj.weight", {KV * d, C}, &m.v);
        if (c.qkv_bias()) {
            binding.vector(p + "self_attn.q_proj.bias", {H * d}, &m.q_b);
            binding.vector(p + "self_attn.k_proj.bias", {KV * d}, &m.k_b);
            binding.vector(p + "self_attn.v_proj.bias", {KV * d}, &m.v_b);
        }
        if (c.qk_norm()) {
            binding.vector(p + "self_attn.q_norm.weight", {d}, &L.q_norm);
            binding.vector(p + "self_attn.k_norm.weight", {d}, &L.k_norm);
        }
        binding.matrix(p + "self_attn.o_proj.weight", {C, H * d}, &m.o);
        if (c.o_bias()) binding.vector(p + "self_attn.o_proj.bias", {C}, &L.o_b);
        binding.vector(p + "post_attention_layernorm.weight", {C}, &L.post_norm);
        binding.matrix(p + "mlp.gate_proj.weight", {I, C}, &m.gate);
        binding.matrix(p + "mlp.up_proj.weight", {I, C}, &m.up);
        binding.matrix(p + "mlp.down_proj.weight", {C, I}, &m.down);
        if (c.mlp_bias) {
            binding.vector(p + "mlp.gate_proj.bias", {I}, &L.gate_b);
            binding.vector(p + "mlp.up_proj.bias", {I}, &L.up_b);
            binding.vector(p + "mlp.down_proj.bias", {C}, &L.down_b);
        }
    }
    binding.vector("model.norm.weight", {C}, &final_norm);
    // Tied: lm_head is embed_tokens (and a checkpoint usually leaves lm_head.weight out).
    if (!c.tie_word_embeddings) binding.matrix("lm_head.weight", {V, C}, &lm_head);
    std::int64_t params = 0;
    if (!binding.bind(owned_, params, error)) return false;
    if (c.tie_word_embeddings) lm_head = embed;
    // q, k and v are one product, side by side in its columns.
    const int qd = static_cast<int>(H * d), kvd = static_cast<int>(KV * d), hidden = static_cast<int>(C), inter = static_cast<int>(I);
    for (size_t l = 0; l < layers.size(); ++l) {
        LlamaLayerWeights& L = layers[l];
        const LayerParts& m = parts[l];
        if (m.q.type != m.k.type || m.q.type != m.v.type) {
            error = src + ": layer " + std::to_string(l) + "'s q_proj, k_proj and v_proj differ in dtype; AttnLab reads them as one";
            return false;
        }
        L.qkv = LinearWeight({{m.q, qd}, {m.k, kvd}, {m.v, kvd}}, hidden);
        L.qkv_b.clear();
        if (m.q_b) {
            L.qkv_b.insert(L.qkv_b.end(), m.q_b, m.q_b + qd);
            L.qkv_b.insert(L.qkv_b.end(), m.k_b, m.k_b + kvd);
            L.qkv_b.insert(L.qkv_b.end(), m.v_b, m.v_b + kvd);
        }
        L.o = LinearWeight({{m.o, hidden}}, qd);
        L.gate = LinearWeight({{m.gate, inter}}, hidden);
        L.up = LinearWeight({{m.up, inter}}, hidden);
        L.down = LinearWeight({{m.down, hidden}}, inter);
    }

    trained_plan_ = AttentionPlan(c.num_hidden_layers, c.num_attention_heads);
    if (!parse_attention_spec(c.attention, c.num_hidden_layers, c.num_attention_heads, trained_plan_, error)) {
        error = src + ": attnlab_attention: " + error;
        return false;
    }
    rope_inv_freq = rope_inverse_frequencies(c);
    config_ = c;
    parameter_count_ = params;
    return true;
}

}  // namespace attnlab
