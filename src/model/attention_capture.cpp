#include "model/attention_capture.h"

#include "model/parallel.h"

#include <Eigen/Core>
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
    const size_t C = static_cast<size_t>(x.n_head) * x.head_dim;
    const size_t total = static_cast<size_t>(x.t0 + x.n) * C;
    Layer& L = layers_[static_cast<size_t>(x.layer)];
    // Queries arrive only for the new tokens; keys and values are the whole cache so far.
    L.q.resize(total);
    std::copy(x.q, x.q + static_cast<size_t>(x.n) * C, L.q.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(x.t0) * C));
    L.k.assign(x.k, x.k + total);
    L.v.assign(x.v, x.v + total);
    if (keep_residual_) {
        L.x.resize(total);
        std::copy(x.residual, x.residual + static_cast<size_t>(x.n) * C, L.x.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(x.t0) * C));
    }
    length_ = x.t0 + x.n;
}

std::vector<float> AttentionCapture::slice(const std::vector<float>& m, int head) const {
    const size_t C = static_cast<size_t>(n_head_) * head_dim_;
    std::vector<float> out(static_cast<size_t>(length_) * head_dim_);
    for (int t = 0; t < length_; ++t) {
        const float* src = m.data() + t * C + static_cast<size_t>(head) * head_dim_;
        std::copy(src, src + head_dim_, out.begin() + static_cast<std::ptrdiff_t>(t) * head_dim_);
    }
    return out;
}

std::vector<float> AttentionCapture::queries(int layer, int head) const { return slice(layers_.at(static_cast<size_t>(layer)).q, head); }
std::vector<float> AttentionCapture::keys(int layer, int head) const { return slice(layers_.at(static_cast<size_t>(layer)).k, head); }
std::vector<float> AttentionCapture::values(int layer, int head) const { return slice(layers_.at(static_cast<size_t>(layer)).v, head); }

std::vector<float> AttentionCapture::scores(int layer, int head) const {
    using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const std::vector<float> q = queries(layer, head), k = keys(layer, head);
    const int T = length_, d = head_dim_;
    std::vector<float> s(static_cast<size_t>(T) * T);
    Eigen::Map<RowMatrix> S(s.data(), T, T);
    // Fixed row blocks inside a parallel region, as in the forward pass's linear(): the same
    // bits whatever the thread count.
    constexpr int block = 256;
    const Eigen::Map<const RowMatrix> Q(q.data(), T, d), K(k.data(), T, d);
    ATTNLAB_PRAGMA(omp parallel for schedule(static))
    for (int r0 = 0; r0 < T; r0 += block) {
        const int rows = std::min(block, T - r0);
        S.middleRows(r0, rows).noalias() = Q.middleRows(r0, rows) * K.transpose();
    }
    S *= 1.0f / std::sqrt(static_cast<float>(d));
    for (int i = 0; i < T; ++i) S.row(i).tail(T - 1 - i).setConstant(-std::numeric_limits<float>::infinity());
    return s;
}

std::vector<float> AttentionCapture::weights(int layer, int head, float temperature) const {
    std::vector<float> w = scores(layer, head);
    const int T = length_;
    for (int i = 0; i < T; ++i) {
        float* row = w.data() + static_cast<size_t>(i) * T;
        const float top = *std::max_element(row, row + i + 1);
        float sum = 0.0f;
        for (int j = 0; j <= i; ++j) sum += (row[j] = std::exp((row[j] - top) / temperature));
        for (int j = 0; j <= i; ++j) row[j] /= sum;
        for (int j = i + 1; j < T; ++j) row[j] = 0.0f;
    }
    return w;
}

}  // namespace attnlab
