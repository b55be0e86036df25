#pragma once
// An AttentionObserver that keeps every layer's Q, K and V, and recomputes any head's
// attention matrix from them on demand: under another temperature, or handed to another
// normalizer, without running the model again. Keeping Q/K/V costs 3 x n_layer x T x C
// floats (113 MB for GPT-2 small at T = 1024); all 144 T x T matrices would cost 600 MB.
#include <vector>

#include "model/attention_plan.h"
#include "model/gpt2.h"

namespace attnlab {

class AttentionCapture final : public AttentionObserver {
public:
    // keep_residual also keeps each layer's input residual stream, (T, C) per layer (37 MB for
    // GPT-2 small at T = 1024), for analyses over the 768-d residual vectors.
    explicit AttentionCapture(bool keep_residual = false) : keep_residual_(keep_residual) {}

    void on_layer(const LayerQkv& qkv) override;

    int layers() const { return static_cast<int>(layers_.size()); }
    int length() const { return length_; }  // tokens captured
    int n_head() const { return n_head_; }
    int head_dim() const { return head_dim_; }
    int n_kv_head() const { return n_kv_head_; }  // keys(layer, h) are head h / (n_head / n_kv_head)'s

    // (T, head_dim) slices, copied out: one query head's queries, and the keys and values it reads
    // (its key/value group's, under grouped-query attention).
    std::vector<float> queries(int layer, int head) const;
    std::vector<float> keys(int layer, int head) const;
    std::vector<float> values(int layer, int head) const;
    // (T, C): the layer's input residual stream; empty unless constructed with keep_residual.
    const std::vector<float>& residual(int layer) const { return layers_.at(static_cast<size_t>(layer)).x; }
    int width() const { return width_; }  // C

    // (T, T) pre-softmax scores q.k / sqrt(d), -inf above the diagonal (causal).
    std::vector<float> scores(int layer, int head) const;
    // (T, T) row by row: the head's visible scores under `how` (a normalizer and a temperature;
    // by default softmax at T = 1, the model as trained), 0 above the diagonal. Pass the plan the
    // pass ran (AttentionPlan::at) for the weights the model used.
    std::vector<float> weights(int layer, int head, const HeadPlan& how = {}) const;

    void clear();

private:
    struct Layer {
        std::vector<float> q;     // (T, n_head, d)
        std::vector<float> k, v;  // (T, n_kv_head, d)
        std::vector<float> x;     // (T, C), only with keep_residual
    };
    std::vector<Layer> layers_;
    int length_ = 0, n_head_ = 0, head_dim_ = 0, n_kv_head_ = 0, width_ = 0;
    bool keep_residual_ = false;

    std::vector<float> slice(const std::vector<float>& m, int heads, int head) const;
};

}  // namespace attnlab
