#include "model/gpt2.h"
#include "model/normalize_rows.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/parallel.h"
#include "model/gemm.h"

namespace attnlab {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Matrix = Eigen::Map<RowMatrix>;

// Queries per attention block: small enough for a block's scores to stay in cache, large
// enough for efficient matrix products.
constexpr int kQueryBlock = 64;

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

// Columns c0..c0 + width - 1 of every row: x (n, cols) += y (n, cols).
void add_columns(float* x, const float* y, int n, int cols, int c0, int width) {
    for (int i = 0; i < n; ++i) {
        const size_t at = static_cast<size_t>(i) * cols + c0;
        for (int c = 0; c < width; ++c) x[at + c] += y[at + c];
    }
}

// The sum of f(x[c]) over c < C, in double (C = 768 sums of fp32 lose digits otherwise), in
// kLanes partial sums that the compiler keeps in vector registers: one sum in order was 3% of a
// 2-thread prefill.
template <typename F>
double sum_in_lanes(const float* x, int C, F f) {
    constexpr int kLanes = 8;
    double lane[kLanes] = {};
    const int whole = C / kLanes * kLanes;
    for (int c = 0; c < whole; c += kLanes)
        for (int l = 0; l < kLanes; ++l) lane[l] += f(x[c + l]);
    for (int c = whole; c < C; ++c) lane[c - whole] += f(x[c]);
    double sum = 0.0;
    for (int l = 0; l < kLanes; ++l) sum += lane[l];
    return sum;
}

// out = LayerNorm(in) row by row; in, out: (n, C).
void layer_norm(const float* in, float* out, int n, int C, const float* w, const float* b, float eps) {
    parallel_for(
        n,
        [&](int i) {
            const float* x = in + static_cast<size_t>(i) * C;
            float* y = out + static_cast<size_t>(i) * C;
            const double mean = sum_in_lanes(x, C, [](float v) { return static_cast<double>(v); }) / C;
            const double var = sum_in_lanes(x, C, [mean](float v) { return (v - mean) * (v - mean); }) / C;
            const float m = static_cast<float>(mean);
            const float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
            for (int c = 0; c < C; ++c) y[c] = (x[c] - m) * inv * w[c] + b[c];
        },
        n >= 16);
}

}  // namespace

Gpt2State::Gpt2State(const Gpt2Model& model) : plan(model.trained_plan()), model_(model) {
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
    // In slices of the vocabulary, spread over the threads: for one row this is a matrix-vector
    // product, and reading the 154 MB of lm_head is most of a decode step.
    constexpr int slice = 2048;
    parallel_for((V + slice - 1) / slice, [&](int item) {
        const int v0 = item * slice, count = std::min(slice, V - v0);
        gemm(rows, count, C, from, C, w.lm_head.offset(static_cast<size_t>(v0) * C), C, true, logits.data() + v0, V);
    });
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
    if (n == 0) {
        error = "no tokens to run";
        return false;
    }
    if (plan.n_layer() != cfg.n_layer || plan.n_head() != cfg.n_head) {
        error = "the attention plan is for " + std::to_string(plan.n_layer()) + " layers x " + std::to_string(plan.n_head()) +
                " heads; this model has " + std::to_string(cfg.n_layer) + " x " + std::to_string(cfg.n_head);
        return false;
    }
    if (t_ + n > cfg.n_positions) {
        error = "the sequence would be " + std::to_string(t_ + n) + " tokens long; this model takes at most " +
                std::to_string(cfg.n_positions) + " (n_positions)";
        return false;
    }
    for (int i = 0; i < n; ++i) {
        if (tokens[i] < 0 || tokens[i] >= V) {
            error = "token id " + std::to_string(tokens[i]) + " at position " + std::to_string(i) + " is outside the vocabulary 0.." +
                    std::to_string(V - 1);
            return false;
        }
    }
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

    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
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

        // Per head and block of queries: scores = q k^T / sqrt(d) over the keys the block can see
        // (none after its last query: causal), weights = softmax(scores / tau), out = weights v.
        // Blocks keep the scratch in cache and skip most of the masked triangle; they are
        // independent, so natively they run in parallel. A head an observer asked for runs as
        // one block, so that the observer sees whole (n, T) matrices.
        const int block = std::min(n, kQueryBlock);
        const int blocks = (n + block - 1) / block;
        std::vector<char> whole(static_cast<size_t>(H), 0);
        bool any_whole = false;
        for (int hd = 0; hd < H && observer; ++hd) any_whole |= (whole[static_cast<size_t>(hd)] = observer->wants_head(l, hd)) != 0;
        // Every thread's scratch starts on a 64-byte boundary: Eigen's vectorised exp and sum
        // treat the unaligned head of a row differently, so a thread-dependent alignment would
        // make the results depend on which thread ran the block.
        const size_t scratch_floats = (static_cast<size_t>(any_whole ? n : block) * T * 2 + 15) / 16 * 16;
        scores_.resize(static_cast<size_t>(max_threads()) * scratch_floats + 16);
        float* const scratch_base = scores_.data() + (16 - (reinterpret_cast<std::uintptr_t>(scores_.data()) / sizeof(float)) % 16) % 16;
        parallel_for(
            H * blocks,
            [&](int item) {
                const int hd = item / blocks, b = item % blocks;
                const bool observed = whole[static_cast<size_t>(hd)] != 0;
                if (observed && b != 0) return;  // block 0 does the whole head
                const int r0 = observed ? 0 : b * block, r1 = observed ? n : std::min(n, r0 + block);
                const int rows = r1 - r0, keys = t_ + r1;  // the block's last query sees keys 0..keys-1
                float* scratch = scratch_base + static_cast<size_t>(thread_index()) * scratch_floats;
                Matrix S(scratch, rows, keys);                                     // (rows, keys)
                Matrix P(scratch + static_cast<size_t>(rows) * keys, rows, keys);  // (rows, keys)
                // q (rows, d), k and v (keys, d): head hd's columns of rows with stride C
                gemm(rows, keys, d, q_.data() + static_cast<size_t>(r0) * C + hd * d, C, k_cache + hd * d, C, true, S.data(), keys, scale);
                const HeadPlan& hp = plan.at(l, hd);
                const bool softmax = hp.normalizer == Normalizer{};  // entmax:1 too: the same bits as softmax
                const float tau = hp.temperature;
                for (int i = 0; i < rows; ++i) {
                    const int visible = t_ + r0 + i + 1;  // query at position t_ + r0 + i sees keys 0..t_ + r0 + i
                    auto sv = S.row(i).head(visible).array();
                    auto pv = P.row(i).head(visible).array();
                    if (softmax) {
                        pv = ((sv - sv.maxCoeff()) * (1.0f / tau)).exp();  // Eigen's exp is vectorised
                        pv *= 1.0f / pv.sum();
                    } else {
                        normalize_row(hp, S.row(i).data(), visible, P.row(i).data());
                    }
                    P.row(i).tail(keys - visible).setZero();
                    S.row(i).tail(keys - visible).setConstant(-std::numeric_limits<float>::infinity());
                }
                if (observed) observer->on_head({l, hd, t_, n, T, hp, S.data(), P.data()});
                gemm(rows, d, keys, P.data(), keys, v_cache + hd * d, C, false, attn_out_.data() + static_cast<size_t>(r0) * C + hd * d, C);
            },
            !any_whole);

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

void next_token_nll(const Gpt2Model& model, const float* residual, int n, std::span<const int> targets, std::vector<double>& nll) {
    const Gpt2Config& cfg = model.config();
    const Gpt2Weights& w = model.weights();
    const int C = cfg.n_embd, V = cfg.vocab_size;
    nll.assign(static_cast<size_t>(n), std::nan(""));
    // A block of rows at a time, each block's logits a slice of the vocabulary at a time (as
    // forward() reads lm_head), with a running log-sum-exp per row: 64 x 2048 floats of scratch.
    constexpr int kRows = 64, kSlice = 2048;
    parallel_for((n + kRows - 1) / kRows, [&](int item) {
        const int r0 = item * kRows, rows = std::min(kRows, n - r0);
        thread_local std::vector<float> normed, logits;
        normed.resize(static_cast<size_t>(rows) * C);
        logits.resize(static_cast<size_t>(rows) * kSlice);
        layer_norm(residual + static_cast<size_t>(r0) * C, normed.data(), rows, C, w.ln_f_w, w.ln_f_b, cfg.layer_norm_epsilon);
        std::vector<double> top(static_cast<size_t>(rows), -std::numeric_limits<double>::infinity()), sum(static_cast<size_t>(rows), 0.0);
        std::vector<double> target_logit(static_cast<size_t>(rows), std::nan(""));
        for (int v0 = 0; v0 < V; v0 += kSlice) {
            const int count = std::min(kSlice, V - v0);
            gemm(rows, count, C, normed.data(), C, w.lm_head.offset(static_cast<size_t>(v0) * C), C, true, logits.data(), kSlice);
            for (int i = 0; i < rows; ++i) {
                const float* row = logits.data() + static_cast<size_t>(i) * kSlice;
                const double m = std::max<double>(top[static_cast<size_t>(i)], *std::max_element(row, row + count));
                double s = sum[static_cast<size_t>(i)] * std::exp(top[static_cast<size_t>(i)] - m);
                for (int v = 0; v < count; ++v) s += std::exp(static_cast<double>(row[v]) - m);
                top[static_cast<size_t>(i)] = m;
                sum[static_cast<size_t>(i)] = s;
                const size_t at = static_cast<size_t>(r0 + i);
                if (at < targets.size() && targets[at] >= v0 && targets[at] < v0 + count)
                    target_logit[static_cast<size_t>(i)] = row[targets[at] - v0];
            }
        }
        for (int i = 0; i < rows; ++i) {
            const size_t at = static_cast<size_t>(r0 + i);
            if (at < targets.size() && targets[at] >= 0 && targets[at] < V)
                nll[at] = top[static_cast<size_t>(i)] + std::log(sum[static_cast<size_t>(i)]) - target_logit[static_cast<size_t>(i)];
        }
    });
}

}  // namespace attnlab
