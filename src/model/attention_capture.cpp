#include "model/attention_capture.h"

#include "base/parallel.h"
#include "model/gemm.h"
#include "model/normalize_rows.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab {

void AttentionCapture::clear() {
    layers_.clear();
    length_ = 0;
}

void AttentionCapture::on_layer(const LayerQkv& x) {
    if (static_cast<int>(layers_.size()) <= x.layer) layers_.resize(static_cast<size_t>(x.layer) + 1);
    n_head_ = x.n_head;
    head_dim_ = x.head_dim;
    n_kv_head_ = x.kv_heads();
    width_ = x.residual_width();
    const size_t C = static_cast<size_t>(x.n_head) * x.head_dim, K = static_cast<size_t>(n_kv_head_) * x.head_dim;
    const size_t W = static_cast<size_t>(width_), T = static_cast<size_t>(x.t0 + x.n);
    Layer& L = layers_[static_cast<size_t>(x.layer)];
    // Queries arrive only for the new tokens; keys and values are the whole cache so far.
    L.q.resize(T * C);
    std::copy(x.q, x.q + static_cast<size_t>(x.n) * C, L.q.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(x.t0) * C));
    L.k.assign(x.k, x.k + T * K);
    L.v.assign(x.v, x.v + T * K);
    if (keep_residual_) {
        L.x.resize(T * W);
        std::copy(x.residual, x.residual + static_cast<size_t>(x.n) * W,
                  L.x.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(x.t0) * W));
    }
    length_ = x.t0 + x.n;
}

std::vector<float> AttentionCapture::slice(const std::vector<float>& m, int heads, int head) const {
    const size_t C = static_cast<size_t>(heads) * head_dim_;
    std::vector<float> out(static_cast<size_t>(length_) * head_dim_);
    for (int t = 0; t < length_; ++t) {
        const float* src = m.data() + t * C + static_cast<size_t>(head) * head_dim_;
        std::copy(src, src + head_dim_, out.begin() + static_cast<std::ptrdiff_t>(t) * head_dim_);
    }
    return out;
}

std::vector<float> AttentionCapture::queries(int layer, int head) const {
    return slice(layers_.at(static_cast<size_t>(layer)).q, n_head_, head);
}
std::vector<float> AttentionCapture::keys(int layer, int head) const {
    return slice(layers_.at(static_cast<size_t>(layer)).k, n_kv_head_, head / (n_head_ / n_kv_head_));
}
std::vector<float> AttentionCapture::values(int layer, int head) const {
    return slice(layers_.at(static_cast<size_t>(layer)).v, n_kv_head_, head / (n_head_ / n_kv_head_));
}

std::vector<float> AttentionCapture::scores(int layer, int head) const {
    const std::vector<float> q = queries(layer, head), k = keys(layer, head);
    const int T = length_, d = head_dim_;
    std::vector<float> s(static_cast<size_t>(T) * T);
    // Fixed row blocks, as in the forward pass's linear(): the same bits whatever the thread
    // count, and the same scaling as the forward pass's scores.
    constexpr int block = 256;
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    parallel_for((T + block - 1) / block, [&](int item) {
        const int r0 = item * block;
        gemm(std::min(block, T - r0), T, d, q.data() + static_cast<size_t>(r0) * d, d, k.data(), d, true,
             s.data() + static_cast<size_t>(r0) * T, T, scale);
    });
    for (int i = 0; i < T; ++i)
        std::fill(s.begin() + static_cast<std::ptrdiff_t>(i) * T + i + 1, s.begin() + static_cast<std::ptrdiff_t>(i + 1) * T,
                  -std::numeric_limits<float>::infinity());
    return s;
}

std::vector<float> AttentionCapture::weights(int layer, int head, const HeadPlan& how) const {
    std::vector<float> w = scores(layer, head);
    const int T = length_;
    const float temperature = how.temperature;
    for (int i = 0; i < T; ++i) {
        float* row = w.data() + static_cast<size_t>(i) * T;
        if (!(how.normalizer == Normalizer{})) {  // entmax:1 is softmax
            normalize_row(how, row, i + 1, row);
            std::fill(row + i + 1, row + T, 0.0f);
            continue;
        }
        const float top = *std::max_element(row, row + i + 1);
        float sum = 0.0f;
        for (int j = 0; j <= i; ++j) sum += (row[j] = std::exp((row[j] - top) / temperature));
        for (int j = 0; j <= i; ++j) row[j] /= sum;
        for (int j = i + 1; j < T; ++j) row[j] = 0.0f;
    }
    return w;
}

}  // namespace attnlab
