#include "model/llama.h"

#include <algorithm>
#include <cmath>

#include "model/normalize_rows.h"

namespace attnlab {

namespace {

// g = silu(g) u = g / (1 + exp(-g)) u, with the softmax rows' vectorised exp (std::exp one element
// at a time was an eighth of a one-thread prefill at L = 128), whose bits do not depend on how the
// thread count cut the columns into runs.
void silu_times(float* g, const float* u, int n) {
    const float* e = exp_scaled(g, n, -1.0, 0.0);
    for (int j = 0; j < n; ++j) g[j] = g[j] / (1.0f + e[j]) * u[j];
}

}  // namespace

LlamaState::LlamaState(const LlamaModel& model) : DecoderState(model.trained_plan()), model_(model) {
    k_cache_.resize(static_cast<size_t>(model.config().num_hidden_layers));
    v_cache_.resize(k_cache_.size());
}

void LlamaState::rotary_angles(int n) {
    // Hugging Face's rotate_half: dimension i pairs with i + d/2, both at angle pos * inv_freq[i].
    const int half = model_.config().head_dim / 2;
    const std::vector<double>& inv = model_.rope_inv_freq;
    cos_.resize(static_cast<size_t>(n) * half);
    sin_.resize(cos_.size());
    for (int i = 0; i < n; ++i) {
        const double pos = t_ + i;
        for (int j = 0; j < half; ++j) {
            const double angle = pos * inv[static_cast<size_t>(j)];
            cos_[static_cast<size_t>(i) * half + j] = static_cast<float>(std::cos(angle));
            sin_[static_cast<size_t>(i) * half + j] = static_cast<float>(std::sin(angle));
        }
    }
}

void LlamaState::rotate(float* rows, int n, int heads, int stride) const {
    const int d = model_.config().head_dim, half = d / 2;
    for (int i = 0; i < n; ++i) {
        const float* c = cos_.data() + static_cast<size_t>(i) * half;
        const float* s = sin_.data() + static_cast<size_t>(i) * half;
        for (int h = 0; h < heads; ++h) {
            float* x = rows + static_cast<size_t>(i) * stride + h * d;
            for (int j = 0; j < half; ++j) {
                const float a = x[j], b = x[j + half];
                x[j] = a * c[j] - b * s[j];
                x[j + half] = b * c[j] + a * s[j];
            }
        }
    }
}

bool LlamaState::forward(std::span<const int> tokens, std::vector<float>& logits, std::string& error, bool all_logits,
                         AttentionObserver* observer) {
    if (!run_layers(tokens, error, observer)) return false;
    const LlamaConfig& c = model_.config();
    const int n = static_cast<int>(tokens.size()), C = c.hidden_size, V = c.vocab_size;
    norm_out_.resize(static_cast<size_t>(n) * C);
    rms_norm(x_.data(), norm_out_.data(), n, C, model_.final_norm, c.rms_norm_eps);
    const int rows = all_logits ? n : 1;
    logits.resize(static_cast<size_t>(rows) * V);
    logits_from_hidden(norm_out_.data() + static_cast<size_t>(n - rows) * C, rows, C, model_.lm_head, V, logits.data());
    return true;
}

bool LlamaState::prefill(std::span<const int> tokens, std::string& error, AttentionObserver* observer) {
    return run_layers(tokens, error, observer);
}

bool LlamaState::run_layers(std::span<const int> tokens, std::string& error, AttentionObserver* observer) {
    const LlamaConfig& c = model_.config();
    const int n = static_cast<int>(tokens.size());
    const int C = c.hidden_size, H = c.num_attention_heads, KV = c.num_key_value_heads, d = c.head_dim, V = c.vocab_size;
    const int I = c.intermediate_size, Q = H * d, K = KV * d;
    if (!check_new_tokens(tokens, plan, c.num_hidden_layers, H, t_, c.max_position_embeddings, "max_position_embeddings", V, error))
        return false;
    const int T = t_ + n;
    if (T > capacity_) {  // grow the caches geometrically, keeping what they hold
        capacity_ = std::min(c.max_position_embeddings, std::max(T, 2 * capacity_));
        for (size_t l = 0; l < k_cache_.size(); ++l) {
            k_cache_[l].resize(static_cast<size_t>(capacity_) * K);
            v_cache_[l].resize(static_cast<size_t>(capacity_) * K);
        }
    }
    const size_t nC = static_cast<size_t>(n) * C;
    x_.resize(nC);
    h_.resize(nC);
    qkv_.resize(static_cast<size_t>(n) * (Q + 2 * K));
    q_.resize(static_cast<size_t>(n) * Q);
    attn_out_.resize(static_cast<size_t>(n) * Q);
    gate_.resize(static_cast<size_t>(n) * I);
    up_.resize(static_cast<size_t>(n) * I);
    for (int i = 0; i < n; ++i)
        widen(model_.embed.offset(static_cast<size_t>(tokens[i]) * C), static_cast<size_t>(C), x_.data() + static_cast<size_t>(i) * C);
    const auto add_to_x = [&](int c0, int width) { add_columns(x_.data(), h_.data(), n, C, c0, width); };
    rotary_angles(n);
    for (int l = 0; l < c.num_hidden_layers; ++l) {
        const LlamaLayerWeights& L = model_.layers[static_cast<size_t>(l)];
        float* k_cache = k_cache_[static_cast<size_t>(l)].data();
        float* v_cache = v_cache_[static_cast<size_t>(l)].data();
        float* k_new = k_cache + static_cast<size_t>(t_) * K;
        float* v_new = v_cache + static_cast<size_t>(t_) * K;

        rms_norm(x_.data(), h_.data(), n, C, L.input_norm, c.rms_norm_eps);
        const int widths[3] = {Q, K, K}, starts[3] = {0, Q, Q + K};
        float* const to[3] = {q_.data(), k_new, v_new};
        L.qkv.apply(h_.data(), n, L.qkv_b.empty() ? nullptr : L.qkv_b.data(), qkv_.data(), [&](int c0, int width) {
            for (int col = c0, end = c0 + width; col < end;) {  // the run's parts of q, k and v
                const int part = col < Q ? 0 : col < Q + K ? 1 : 2, stop = std::min(end, starts[part] + widths[part]);
                for (int i = 0; i < n; ++i) {
                    const float* row = qkv_.data() + static_cast<size_t>(i) * (Q + 2 * K);
                    std::copy(row + col, row + stop, to[part] + static_cast<size_t>(i) * widths[part] + (col - starts[part]));
                }
                col = stop;
            }
        });
        if (L.q_norm) {  // Qwen3: each head's q and k, as rows of d, before the rotation
            rms_norm(q_.data(), q_.data(), n * H, d, L.q_norm, c.rms_norm_eps);
            rms_norm(k_new, k_new, n * KV, d, L.k_norm, c.rms_norm_eps);
        }
        rotate(q_.data(), n, H, Q);
        rotate(k_new, n, KV, K);
        if (observer) {
            LayerQkv seen{l, t_, n, H, d, x_.data(), q_.data(), k_cache, v_cache};
            seen.n_kv_head = KV;
            seen.hidden = C;
            observer->on_layer(seen);
        }
        causal_attention({l, t_, n, H, KV, d, q_.data(), Q, k_cache, v_cache, K, attn_out_.data(), Q}, plan, observer, scores_);
        L.o.apply(attn_out_.data(), n, L.o_b, h_.data(), add_to_x);

        // x += down(silu(gate(h)) * up(h)), h = RMSNorm(x)
        rms_norm(x_.data(), h_.data(), n, C, L.post_norm, c.rms_norm_eps);
        L.gate.apply(h_.data(), n, L.gate_b, gate_.data());
        L.up.apply(h_.data(), n, L.up_b, up_.data(), [&](int c0, int width) {
            for (int i = 0; i < n; ++i)
                silu_times(gate_.data() + static_cast<size_t>(i) * I + c0, up_.data() + static_cast<size_t>(i) * I + c0, width);
        });
        L.down.apply(gate_.data(), n, L.down_b, h_.data(), add_to_x);
    }
    if (observer) observer->on_output(t_, n, x_.data());
    t_ = T;
    return true;
}

DecoderShape LlamaModel::shape() const {
    const LlamaConfig& c = config_;
    return {arch_name(c.arch), c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads,
            c.head_dim,        c.hidden_size,       c.vocab_size,          c.max_position_embeddings};
}

std::unique_ptr<DecoderState> LlamaModel::new_state() const { return std::make_unique<LlamaState>(*this); }

void LlamaModel::nll_from_residual(const float* residual, int n, std::span<const int> targets, std::vector<double>& nll) const {
    next_token_nll(*this, residual, n, targets, nll);
}

void next_token_nll(const LlamaModel& model, const float* residual, int n, std::span<const int> targets, std::vector<double>& nll) {
    const LlamaConfig& c = model.config();
    const FinalNorm norm = [&](const float* in, float* out, int rows) {
        rms_norm(in, out, rows, c.hidden_size, model.final_norm, c.rms_norm_eps);
    };
    next_token_nll_from(norm, model.lm_head, c.hidden_size, c.vocab_size, residual, n, targets, nll);
}

}  // namespace attnlab
