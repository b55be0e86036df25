// Binding a safetensors checkpoint in the Hugging Face GPT-2 layout to Gpt2Model.
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "base/json.h"
#include "model/checkpoint_tensors.h"
#include "model/gpt2.h"

namespace attnlab {

std::string gpt2_config_json(const Gpt2Config& c) {
    json::ObjectBuilder o;
    o.add("model_type", "gpt2").add("activation_function", "gelu_new");
    o.add("n_layer", c.n_layer).add("n_head", c.n_head).add("n_embd", c.n_embd).add("n_positions", c.n_positions);
    // The float's shortest decimal form (1e-05, not 9.9999997e-06), as Python writes it.
    // (libc++ 14, Emscripten's, has no std::to_chars for float.)
    char eps[32];
    for (int digits = 1; digits <= 9; ++digits) {
        std::snprintf(eps, sizeof eps, "%.*g", digits, static_cast<double>(c.layer_norm_epsilon));
        if (std::strtof(eps, nullptr) == c.layer_norm_epsilon) break;
    }
    o.add("vocab_size", c.vocab_size).add_raw("layer_norm_epsilon", eps);
    if (!c.attention.empty()) o.add("attnlab_attention", c.attention);
    return o.str() + "\n";
}

bool parse_gpt2_config(std::string_view json_text, std::string_view source, Gpt2Config& config, std::string& error) {
    const std::string where(source);
    const json::ParseResult parsed = json::parse(json_text);
    if (!parsed.value) {
        error = where + ": not valid JSON (" + parsed.error + ")";
        return false;
    }
    const json::Value& root = *parsed.value;
    if (!root.is_object()) {
        error = where + ": expected a JSON object";
        return false;
    }
    Gpt2Config c;
    const auto get_int = [&](const char* key, const char* alt, int lo, int hi, int& out, bool required) {
        return config_int(root, where, key, alt, lo, hi, out, required, error);
    };
    if (!get_int("n_layer", nullptr, 1, 1024, c.n_layer, true) || !get_int("n_head", nullptr, 1, 1024, c.n_head, true) ||
        !get_int("n_embd", nullptr, 1, 65536, c.n_embd, true) || !get_int("n_positions", "n_ctx", 1, 1 << 20, c.n_positions, true) ||
        !get_int("vocab_size", nullptr, 1, 1 << 22, c.vocab_size, true))
        return false;
    if (const json::Value* eps = root.find("layer_norm_epsilon")) {
        if (!eps->is_number() || !(eps->as_number() > 0.0) || eps->as_number() > 1.0) {
            error = where + ": \"layer_norm_epsilon\" must be a number in (0, 1]";
            return false;
        }
        c.layer_norm_epsilon = static_cast<float>(eps->as_number());
    }
    if (const json::Value* act = root.find("activation_function")) {
        // GPT-2 checkpoints say "gelu_new": the tanh approximation this engine computes.
        if (!act->is_string() || (act->as_string() != "gelu_new" && act->as_string() != "gelu_pytorch_tanh")) {
            error = where + ": activation_function " + (act->is_string() ? "\"" + act->as_string() + "\"" : "of the wrong type") +
                    " is not GPT-2's tanh GELU (\"gelu_new\")";
            return false;
        }
    }
    if (c.n_embd % c.n_head != 0) {
        error = where + ": n_embd " + std::to_string(c.n_embd) + " is not a multiple of n_head " + std::to_string(c.n_head);
        return false;
    }
    if (const json::Value* plan = root.find("attnlab_attention");
        plan && !read_trained_attention(&plan->as_string(), plan->is_string(), where, c.n_layer, c.n_head, c.attention, error))
        return false;
    config = c;
    return true;
}

bool Gpt2Model::load(const SafetensorsReader& reader, const Gpt2Config* config, std::string& error, std::vector<std::string>* warnings) {
    const std::string& src = reader.source();
    // Hugging Face's GPT2Model saves bare names; GPT2LMHeadModel and some conversions prefix them.
    std::string prefix;
    if (reader.find("wte.weight")) prefix = "";
    else if (reader.find("transformer.wte.weight")) prefix = "transformer.";
    else {
        error = src + ": no tensor 'wte.weight' (nor 'transformer.wte.weight'): not a GPT-2 checkpoint";
        return false;
    }
    const TensorInfo* wte = reader.find(prefix + "wte.weight");
    const TensorInfo* wpe = reader.find(prefix + "wpe.weight");
    if (!wpe) {
        error = src + ": missing tensor '" + prefix + "wpe.weight'";
        return false;
    }

    Gpt2Config c;
    if (config) {
        c = *config;
    } else {
        if (wte->shape.size() != 2 || wpe->shape.size() != 2) {
            error = src + ": cannot infer the configuration: wte/wpe are not matrices";
            return false;
        }
        c.vocab_size = static_cast<int>(wte->shape[0]);
        c.n_embd = static_cast<int>(wte->shape[1]);
        c.n_positions = static_cast<int>(wpe->shape[0]);
        c.n_layer = 0;
        while (reader.find(prefix + "h." + std::to_string(c.n_layer) + ".ln_1.weight")) ++c.n_layer;
        if (c.n_embd % 64 != 0 || c.n_layer == 0) {
            error = src + ": cannot infer the configuration (n_embd " + std::to_string(c.n_embd) + ", " + std::to_string(c.n_layer) +
                    " layers); provide config.json";
            return false;
        }
        c.n_head = c.n_embd / 64;
        if (warnings)
            warnings->push_back(src + ": no config.json; inferred " + std::to_string(c.n_layer) + " layers, n_embd " +
                                std::to_string(c.n_embd) + ", n_head " + std::to_string(c.n_head) + " (assuming head size 64)");
    }

    // Every tensor we use, with the shape it must have and where its pointer goes: a vector's
    // (always fp32), or a matrix's (of the checkpoint's type: 16-bit stays 16-bit).
    TensorBinding binding(reader, config ? " from config.json" : "");
    const std::int64_t C = c.n_embd, V = c.vocab_size;
    Gpt2Weights w{};
    w.layers.resize(static_cast<size_t>(c.n_layer));
    const auto need = [&](const std::string& name, std::vector<std::int64_t> shape, const float** dest) {
        binding.vector(prefix + name, std::move(shape), dest);
    };
    const auto need_matrix = [&](const std::string& name, std::vector<std::int64_t> shape, WeightMatrix* dest) {
        binding.matrix(prefix + name, std::move(shape), dest);
    };
    need_matrix("wte.weight", {V, C}, &w.wte);
    need_matrix("wpe.weight", {c.n_positions, C}, &w.wpe);
    // Where each layer's four matrices are, until they become LinearWeights below.
    std::vector<std::array<WeightMatrix, 4>> matrices(static_cast<size_t>(c.n_layer));
    for (int l = 0; l < c.n_layer; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        Gpt2LayerWeights& L = w.layers[static_cast<size_t>(l)];
        std::array<WeightMatrix, 4>& m = matrices[static_cast<size_t>(l)];
        need(h + "ln_1.weight", {C}, &L.ln_1_w);
        need(h + "ln_1.bias", {C}, &L.ln_1_b);
        need_matrix(h + "attn.c_attn.weight", {C, 3 * C}, &m[0]);
        need(h + "attn.c_attn.bias", {3 * C}, &L.c_attn_b);
        need_matrix(h + "attn.c_proj.weight", {C, C}, &m[1]);
        need(h + "attn.c_proj.bias", {C}, &L.c_proj_b);
        need(h + "ln_2.weight", {C}, &L.ln_2_w);
        need(h + "ln_2.bias", {C}, &L.ln_2_b);
        need_matrix(h + "mlp.c_fc.weight", {C, 4 * C}, &m[2]);
        need(h + "mlp.c_fc.bias", {4 * C}, &L.fc_b);
        need_matrix(h + "mlp.c_proj.weight", {4 * C, C}, &m[3]);
        need(h + "mlp.c_proj.bias", {C}, &L.mlp_proj_b);
    }
    need("ln_f.weight", {C}, &w.ln_f_w);
    need("ln_f.bias", {C}, &w.ln_f_b);
    // The output projection is tied to wte unless the checkpoint carries its own.
    const bool own_head = reader.find("lm_head.weight") != nullptr;
    if (own_head) binding.matrix("lm_head.weight", {V, C}, &w.lm_head);
    std::int64_t params = 0;
    if (!binding.bind(owned_, params, error)) return false;
    if (!own_head) w.lm_head = w.wte;
    for (size_t l = 0; l < w.layers.size(); ++l) {
        Gpt2LayerWeights& L = w.layers[l];
        const std::array<WeightMatrix, 4>& m = matrices[l];
        L.c_attn = LinearWeight(m[0], c.n_embd, 3 * c.n_embd);
        L.c_proj = LinearWeight(m[1], c.n_embd, c.n_embd);
        L.fc = LinearWeight(m[2], c.n_embd, 4 * c.n_embd);
        L.mlp_proj = LinearWeight(m[3], 4 * c.n_embd, c.n_embd);
    }

    config_ = c;
    trained_plan_ = AttentionPlan(c.n_layer, c.n_head);
    if (!parse_attention_spec(c.attention, c.n_layer, c.n_head, trained_plan_, error)) {
        error = src + ": attnlab_attention: " + error;
        return false;
    }
    w_ = std::move(w);
    parameter_count_ = params;
    return true;
}

}  // namespace attnlab
