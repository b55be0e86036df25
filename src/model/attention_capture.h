#pragma once
// An AttentionObserver that keeps every layer's Q, K and V, and recomputes any head's
// attention matrix from them on demand: under another temperature, or handed to another
// normalizer, without running the model again. Keeping Q/K/V costs 3 x n_layer x T x C
// floats (113 MB for GPT-2 small at T = 1024); all 144 T x T matrices would cost 600 MB.
// Memory grows with T, never T^2: each call copies only the new tokens' rows (the cache's
// earlier rows do not change), and a head's (T, T) matrix exists only while a caller holds it.
//
// Storage: fp32 (exact: what the CLI's analyses read), or IEEE half for display at long
// lengths (CaptureStorage::f16: half the memory; every read widens, so scores() and weights()
// are then those of the rounded Q and K: each score within about 1e-3 of |q| |k| / sqrt(d)).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/attention_plan.h"
#include "model/gpt2.h"

namespace attnlab {

enum class CaptureStorage { f32, f16 };

// What the page keeps of a pass of `tokens` tokens: fp32 up to kExactCaptureTokens (exact, as
// the CLI's analyses; GPT-2's 1,024 positions always are), half beyond, where 8,192 tokens of a
// SmolLM2-sized model then keep 470 MB rather than 940 MB (the views say so).
constexpr int kExactCaptureTokens = 2048;
inline CaptureStorage display_storage(int tokens) { return tokens > kExactCaptureTokens ? CaptureStorage::f16 : CaptureStorage::f32; }

class AttentionCapture final : public AttentionObserver {
public:
    // keep_residual also keeps each layer's input residual stream, (T, C) per layer (37 MB for
    // GPT-2 small at T = 1024), for analyses over the 768-d residual vectors (always fp32).
    explicit AttentionCapture(bool keep_residual = false, CaptureStorage storage = CaptureStorage::f32)
        : keep_residual_(keep_residual), storage_(storage) {}

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
    CaptureStorage storage() const { return storage_; }
    std::size_t bytes() const;  // what the kept Q, K, V (and residual) take

    // (T, T) pre-softmax scores q.k / sqrt(d), -inf above the diagonal (causal).
    std::vector<float> scores(int layer, int head) const;
    // (T, T) row by row: the head's visible scores under `how` (a normalizer and a temperature;
    // by default softmax at T = 1, the model as trained), 0 above the diagonal. Pass the plan the
    // pass ran (AttentionPlan::at) for the weights the model used.
    std::vector<float> weights(int layer, int head, const HeadPlan& how = {}) const;

    void clear();

private:
    // Rows of `width` values, fp32 or half (one of the two vectors is used).
    struct Rows {
        std::vector<float> f32;
        std::vector<std::uint16_t> f16;
        // Rows t0..t0 + n - 1 from src (n rows of width), the table then t0 + n rows long.
        void put(const float* src, std::size_t t0, std::size_t n, std::size_t width, CaptureStorage storage);
        std::size_t bytes() const { return f32.size() * sizeof(float) + f16.size() * sizeof(std::uint16_t); }
    };
    struct Layer {
        Rows q;                // (T, n_head, d)
        Rows k, v;             // (T, n_kv_head, d)
        std::vector<float> x;  // (T, C), only with keep_residual
    };
    std::vector<Layer> layers_;
    int length_ = 0, n_head_ = 0, head_dim_ = 0, n_kv_head_ = 0, width_ = 0;
    bool keep_residual_ = false;
    CaptureStorage storage_ = CaptureStorage::f32;

    std::vector<float> slice(const Rows& m, int heads, int head) const;
};

}  // namespace attnlab
