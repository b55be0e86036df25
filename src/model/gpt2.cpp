#include "model/gpt2.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/parallel.h"
#include "model/gemm.h"

namespace attnlab {

namespace {

// Columns c0..c0 + width - 1 of every row of v (n, cols): x <- 0.5 x (1 + tanh(sqrt(2/pi) (x +
// 0.044715 x^3))), with Eigen's vectorised tanh.
void gelu_tanh_columns(float* v, int n, int cols, int c0, int width) {
    // Through an aligned copy padded to whole packets: Eigen runs the unaligned head of a row, and
    // a tail shorter than a packet, through the scalar tanh, whose last bit differs from the
    // vector one; so an element's bits would depend on where the run of columns around it
    // begins, which depends on the thread count.
    constexpr int kPacket = 16;
    Eigen::ArrayXf x = Eigen::ArrayXf::Zero((width + kPacket - 1) / kPacket * kPacket);
    for (int i = 0; i < n; ++i) {
        float* row = v + static_cast<size_t>(i) * cols + c0;
        std::copy(row, row + width, x.data());
        x = 0.5f * x * (1.0f + (0.7978845608028654f * (x + 0.044715f * x.cube())).tanh());
        std::copy(x.data(), x.data() + width, row);
    }
}

}  // namespace

Gpt2State::Gpt2State(const Gpt2Model& model) : DecoderState(model.trained_plan()), model_(model) {
    const Gpt2Config& c = model.config();
    const size_t cache = static_cast<size_t>(c.n_layer) * c.n_positions * c.n_embd;
    k_cache_.assign(cache, 0.0f);
    v_cache_.assign(cache, 0.0f);
}

bool Gpt2State::forward(std::span<const int> tokens, std::vector<float>& logits, std::string& error, bool all_logits,
                        AttentionObserver* observer) {
    if (!run_layers(tokens, error, observer)) return false;
    const Gpt2Config& cfg = model_.config();
    const Gpt2Weights& w = model_.weights();
    const int n = static_cast<int>(tokens.size());
    const int C = cfg.n_embd, V = cfg.vocab_size;
    ln_f_out_.resize(static_cast<size_t>(n) * C);
    layer_norm(x_.data(), ln_f_out_.data(), n, C, w.ln_f_w, w.ln_f_b, cfg.layer_norm_epsilon);

    // logits: (rows, V) = ln_f(x) @ lm_head^T, for the last token or all of them
    const int rows = all_logits ? n : 1;
    const float* from = ln_f_out_.data() + static_cast<size_t>(n - rows) * C;
    logits.resize(static_cast<size_t>(rows) * V);
    logits_from_hidden(from, rows, C, w.lm_head, V, logits.data());
    return true;
}

bool Gpt2State::prefill(std::span<const int> tokens, std::string& error, AttentionObserver* observer) {
    return run_layers(tokens, error, observer);
}

bool Gpt2State::run_layers(std::span<const int> tokens, std::string& error, AttentionObserver* observer) {
    const Gpt2Config& cfg = model_.config();
    const Gpt2Weights& w = model_.weights();
    const int n = static_cast<int>(tokens.size());
    const int C = cfg.n_embd, H = cfg.n_head, d = cfg.head_dim(), V = cfg.vocab_size;
    if (!check_new_tokens(tokens, plan, cfg.n_layer, cfg.n_head, t_, cfg.n_positions, "n_positions", V, error)) return false;
    const int T = t_ + n;  // keys visible to the last new token
    const size_t nC = static_cast<size_t>(n) * C;
    x_.resize(nC);
    h_.resize(nC);
    qkv_.resize(nC * 3);
    q_.resize(nC);
    attn_out_.resize(nC);
    fc_.resize(nC * 4);

    // x: (n, C) = token embedding + position embedding
    std::vector<float> pe(static_cast<size_t>(C));
    for (int i = 0; i < n; ++i) {
        float* x = x_.data() + static_cast<size_t>(i) * C;
        widen(w.wte.offset(static_cast<size_t>(tokens[i]) * C), static_cast<size_t>(C), x);
        widen(w.wpe.offset(static_cast<size_t>(t_ + i) * C), static_cast<size_t>(C), pe.data());
        for (int c = 0; c < C; ++c) x[c] += pe[c];
    }

    for (int l = 0; l < cfg.n_layer; ++l) {
        const Gpt2LayerWeights& L = w.layers[l];
        float* k_cache = k_cache_.data() + static_cast<size_t>(l) * cfg.n_positions * C;  // (n_positions, C)
        float* v_cache = v_cache_.data() + static_cast<size_t>(l) * cfg.n_positions * C;

        // qkv: (n, 3C) = ln_1(x) @ c_attn
        layer_norm(x_.data(), h_.data(), n, C, L.ln_1_w, L.ln_1_b, cfg.layer_norm_epsilon);
        // q: (n, H, d); k and v: rows t_.. of this layer's caches, (T, H, d)
        float* const qkv_to[3] = {q_.data(), k_cache + static_cast<size_t>(t_) * C, v_cache + static_cast<size_t>(t_) * C};
        L.c_attn.apply(h_.data(), n, L.c_attn_b, qkv_.data(), [&](int c0, int width) {
            for (int c = c0, end = c0 + width; c < end;) {  // the run's parts of q, k and v
                const int part = c / C, stop = std::min(end, (part + 1) * C);
                for (int i = 0; i < n; ++i) {
                    const float* row = qkv_.data() + static_cast<size_t>(i) * 3 * C;
                    std::copy(row + c, row + stop, qkv_to[part] + static_cast<size_t>(i) * C + (c - part * C));
                }
                c = stop;
            }
        });
        if (observer) observer->on_layer({l, t_, n, H, d, x_.data(), q_.data(), k_cache, v_cache});

        causal_attention({l, t_, n, H, H, d, q_.data(), C, k_cache, v_cache, C, attn_out_.data(), C}, plan, observer, scores_);

        // x += attn_out @ c_proj
        const auto add_to_x = [&](int c0, int width) { add_columns(x_.data(), h_.data(), n, C, c0, width); };
        L.c_proj.apply(attn_out_.data(), n, L.c_proj_b, h_.data(), add_to_x);

        // x += gelu(ln_2(x) @ c_fc) @ c_proj
        layer_norm(x_.data(), h_.data(), n, C, L.ln_2_w, L.ln_2_b, cfg.layer_norm_epsilon);
        L.fc.apply(h_.data(), n, L.fc_b, fc_.data(), [&](int c0, int width) { gelu_tanh_columns(fc_.data(), n, 4 * C, c0, width); });
        L.mlp_proj.apply(fc_.data(), n, L.mlp_proj_b, h_.data(), add_to_x);
    }

    if (observer) observer->on_output(t_, n, x_.data());
    t_ = T;
    return true;
}

DecoderShape Gpt2Model::shape() const {
    const Gpt2Config& c = config_;
    return {"gpt2", c.n_layer, c.n_head, c.n_head, c.head_dim(), c.n_embd, c.vocab_size, c.n_positions};
}

std::unique_ptr<DecoderState> Gpt2Model::new_state() const { return std::make_unique<Gpt2State>(*this); }

void Gpt2Model::nll_from_residual(const float* residual, int n, std::span<const int> targets, std::vector<double>& nll) const {
    next_token_nll(*this, residual, n, targets, nll);
}

void next_token_nll(const Gpt2Model& model, const float* residual, int n, std::span<const int> targets, std::vector<double>& nll) {
    const Gpt2Config& cfg = model.config();
    const Gpt2Weights& w = model.weights();
    const int C = cfg.n_embd, V = cfg.vocab_size;
    const FinalNorm ln_f = [&](const float* in, float* out, int rows) {
        layer_norm(in, out, rows, C, w.ln_f_w, w.ln_f_b, cfg.layer_norm_epsilon);
    };
    next_token_nll_from(ln_f, w.lm_head, C, V, residual, n, targets, nll);
}

}  // namespace attnlab
