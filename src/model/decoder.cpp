#include "model/decoder.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/parallel.h"
#include "model/gemm.h"
#include "model/normalize_rows.h"

namespace attnlab {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Matrix = Eigen::Map<RowMatrix>;

// Queries per attention block: small enough for a block's scores to stay in cache, large
// enough for efficient matrix products.
constexpr int kQueryBlock = 64;

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

}  // namespace

void add_columns(float* x, const float* y, int n, int cols, int c0, int width) {
    for (int i = 0; i < n; ++i) {
        const size_t at = static_cast<size_t>(i) * cols + c0;
        for (int c = 0; c < width; ++c) x[at + c] += y[at + c];
    }
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

void rms_norm(const float* in, float* out, int n, int C, const float* w, float eps) {
    parallel_for(
        n,
        [&](int i) {
            const float* x = in + static_cast<size_t>(i) * C;
            float* y = out + static_cast<size_t>(i) * C;
            const double mean_square = sum_in_lanes(x, C, [](float v) { return static_cast<double>(v) * v; }) / C;
            const float inv = static_cast<float>(1.0 / std::sqrt(mean_square + eps));
            for (int c = 0; c < C; ++c) y[c] = w[c] * (x[c] * inv);
        },
        n >= 16);
}

bool check_new_tokens(std::span<const int> tokens, const AttentionPlan& plan, int n_layer, int n_head, int t0, int max_positions,
                      const char* positions_field, int vocab, std::string& error) {
    const int n = static_cast<int>(tokens.size());
    if (n == 0) {
        error = "no tokens to run";
        return false;
    }
    if (plan.n_layer() != n_layer || plan.n_head() != n_head) {
        error = "the attention plan is for " + std::to_string(plan.n_layer()) + " layers x " + std::to_string(plan.n_head()) +
                " heads; this model has " + std::to_string(n_layer) + " x " + std::to_string(n_head);
        return false;
    }
    if (t0 + n > max_positions) {
        error = "the sequence would be " + std::to_string(t0 + n) + " tokens long; this model takes at most " +
                std::to_string(max_positions) + " (" + positions_field + ")";
        return false;
    }
    for (int i = 0; i < n; ++i) {
        if (tokens[i] < 0 || tokens[i] >= vocab) {
            error = "token id " + std::to_string(tokens[i]) + " at position " + std::to_string(i) + " is outside the vocabulary 0.." +
                    std::to_string(vocab - 1);
            return false;
        }
    }
    return true;
}

bool read_trained_attention(const std::string* plan_text, bool is_string, const std::string& where, int n_layer, int n_head,
                            std::string& spec, std::string& error) {
    AttentionPlan trained(n_layer, n_head);
    std::string why;
    if (!is_string || !parse_attention_spec(*plan_text, n_layer, n_head, trained, why)) {
        error = where + ": \"attnlab_attention\" " + (is_string ? why : std::string("must be a string (the plan's text)"));
        return false;
    }
    spec = attention_spec(trained);
    return true;
}

void causal_attention(const CausalAttention& a, const AttentionPlan& plan, AttentionObserver* observer, std::vector<float>& scratch) {
    const int n = a.n, H = a.n_head, d = a.head_dim, l = a.layer, t0 = a.t0, T = t0 + n;
    const int group = H / a.n_kv_head;  // query heads per key/value head
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
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
    scratch.resize(static_cast<size_t>(max_threads()) * scratch_floats + 16);
    float* const scratch_base = scratch.data() + (16 - (reinterpret_cast<std::uintptr_t>(scratch.data()) / sizeof(float)) % 16) % 16;
    parallel_for(
        H * blocks,
        [&](int item) {
            const int hd = item / blocks, b = item % blocks, kv = hd / group;
            const bool observed = whole[static_cast<size_t>(hd)] != 0;
            if (observed && b != 0) return;  // block 0 does the whole head
            const int r0 = observed ? 0 : b * block, r1 = observed ? n : std::min(n, r0 + block);
            const int rows = r1 - r0, keys = t0 + r1;  // the block's last query sees keys 0..keys-1
            float* s = scratch_base + static_cast<size_t>(thread_index()) * scratch_floats;
            Matrix S(s, rows, keys);                                     // (rows, keys)
            Matrix P(s + static_cast<size_t>(rows) * keys, rows, keys);  // (rows, keys)
            gemm(rows, keys, d, a.q + static_cast<size_t>(r0) * a.q_stride + hd * d, a.q_stride, a.k + kv * d, a.kv_stride, true, S.data(),
                 keys, scale);
            const HeadPlan& hp = plan.at(l, hd);
            const bool softmax = hp.normalizer == Normalizer{};  // entmax:1 too: the same bits as softmax
            const float tau = hp.temperature;
            for (int i = 0; i < rows; ++i) {
                const int visible = t0 + r0 + i + 1;  // query at position t0 + r0 + i sees keys 0..t0 + r0 + i
                if (softmax) softmax_row(S.row(i).data(), visible, 1.0f / tau, P.row(i).data());
                else normalize_row(hp, S.row(i).data(), visible, P.row(i).data());
                P.row(i).tail(keys - visible).setZero();
                S.row(i).tail(keys - visible).setConstant(-std::numeric_limits<float>::infinity());
            }
            if (observed) observer->on_head({l, hd, t0, n, T, hp, S.data(), P.data()});
            gemm(rows, d, keys, P.data(), keys, a.v + kv * d, a.kv_stride, false, a.out + static_cast<size_t>(r0) * a.out_stride + hd * d,
                 a.out_stride);
        },
        !any_whole);
}

void logits_from_hidden(const float* hidden, int rows, int C, WeightMatrix head, int V, float* logits) {
    // In slices of the vocabulary, spread over the threads: for one row this is a matrix-vector
    // product, and reading the 154 MB of GPT-2's lm_head is most of a decode step.
    constexpr int slice = 2048;
    parallel_for((V + slice - 1) / slice, [&](int item) {
        const int v0 = item * slice, count = std::min(slice, V - v0);
        gemm(rows, count, C, hidden, C, head.offset(static_cast<size_t>(v0) * C), C, true, logits + v0, V);
    });
}

void next_token_nll_from(const FinalNorm& final_norm, WeightMatrix head, int C, int V, const float* residual, int n,
                         std::span<const int> targets, std::vector<double>& nll) {
    nll.assign(static_cast<size_t>(n), std::nan(""));
    // A block of rows at a time, each block's logits a slice of the vocabulary at a time (as
    // forward() reads lm_head), with a running log-sum-exp per row: 64 x 2048 floats of scratch.
    constexpr int kRows = 64, kSlice = 2048;
    parallel_for((n + kRows - 1) / kRows, [&](int item) {
        const int r0 = item * kRows, rows = std::min(kRows, n - r0);
        thread_local std::vector<float> normed, logits;
        normed.resize(static_cast<size_t>(rows) * C);
        logits.resize(static_cast<size_t>(rows) * kSlice);
        final_norm(residual + static_cast<size_t>(r0) * C, normed.data(), rows);
        std::vector<double> top(static_cast<size_t>(rows), -std::numeric_limits<double>::infinity()), sum(static_cast<size_t>(rows), 0.0);
        std::vector<double> target_logit(static_cast<size_t>(rows), std::nan(""));
        for (int v0 = 0; v0 < V; v0 += kSlice) {
            const int count = std::min(kSlice, V - v0);
            gemm(rows, count, C, normed.data(), C, head.offset(static_cast<size_t>(v0) * C), C, true, logits.data(), kSlice);
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
