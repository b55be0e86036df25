#include "model/attention_capture.h"

#include "base/parallel.h"
#include "base/safetensors.h"
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

void AttentionCapture::Rows::put(const float* src, std::size_t t0, std::size_t n, std::size_t width, CaptureStorage storage) {
    const std::size_t at = t0 * width, count = n * width;
    if (storage == CaptureStorage::f32) {
        f32.resize(at + count);
        std::copy(src, src + count, f32.begin() + static_cast<std::ptrdiff_t>(at));
        return;
    }
    f16.resize(at + count);
    for (std::size_t i = 0; i < count; ++i) f16[at + i] = f32_to_f16(src[i]);
}

std::size_t AttentionCapture::bytes() const {
    std::size_t total = 0;
    for (const Layer& L : layers_) total += L.q.bytes() + L.k.bytes() + L.v.bytes() + L.x.size() * sizeof(float);
    return total;
}

void AttentionCapture::on_layer(const LayerQkv& x) {
    if (static_cast<int>(layers_.size()) <= x.layer) layers_.resize(static_cast<size_t>(x.layer) + 1);
    n_head_ = x.n_head;
    head_dim_ = x.head_dim;
    n_kv_head_ = x.kv_heads();
    width_ = x.residual_width();
    const size_t C = static_cast<size_t>(x.n_head) * x.head_dim, K = static_cast<size_t>(n_kv_head_) * x.head_dim;
    const size_t W = static_cast<size_t>(width_), t0 = static_cast<size_t>(x.t0), n = static_cast<size_t>(x.n);
    Layer& L = layers_[static_cast<size_t>(x.layer)];
    // Queries arrive only for the new tokens; keys and values are the whole cache so far, whose
    // rows before t0 this capture already holds (a chunked pass would copy the cache again at
    // every chunk otherwise: quadratic in the length).
    L.q.put(x.q, t0, n, C, storage_);
    L.k.put(x.k + t0 * K, t0, n, K, storage_);
    L.v.put(x.v + t0 * K, t0, n, K, storage_);
    if (keep_residual_) {
        L.x.resize((t0 + n) * W);
        std::copy(x.residual, x.residual + n * W, L.x.begin() + static_cast<std::ptrdiff_t>(t0 * W));
    }
    length_ = x.t0 + x.n;
}

std::vector<float> AttentionCapture::slice(const Rows& m, int heads, int head) const {
    const size_t C = static_cast<size_t>(heads) * head_dim_, d = static_cast<size_t>(head_dim_);
    std::vector<float> out(static_cast<size_t>(length_) * d);
    for (size_t t = 0; t < static_cast<size_t>(length_); ++t) {
        const size_t from = t * C + static_cast<size_t>(head) * d;
        float* to = out.data() + t * d;
        if (m.f16.empty())
            std::copy(m.f32.begin() + static_cast<std::ptrdiff_t>(from), m.f32.begin() + static_cast<std::ptrdiff_t>(from + d), to);
        else
            for (size_t c = 0; c < d; ++c) to[c] = f16_to_f32(m.f16[from + c]);
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
