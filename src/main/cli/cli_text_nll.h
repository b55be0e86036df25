#pragma once
// What `attnlab perplexity` and `attnlab experiment normalizer-swap` share: a text read from
// --text FILE or --ids, cut to the model's context, and its next-token log-likelihood.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "main/cli/cli_args.h"
#include "model/gpt2.h"

namespace attnlab {

struct TextInput {
    std::string path;      // the --text file, or "--ids"
    std::string bytes;     // the file's bytes, or the --ids string as given (what is hashed)
    std::vector<int> ids;  // cut to the limit
    int text_tokens = 0;   // before the cut
    int cut() const { return text_tokens - static_cast<int>(ids.size()); }
};

// Reads --text FILE (GPT-2's tokenizer from --vocab-dir) or --ids 1,2,3, exactly one of them,
// and keeps the first `limit` tokens. False with a message on a missing or unreadable file, an id
// outside the vocabulary, or both or neither option; `usage` is set when the fault is the
// arguments' (exit 2) rather than the input's (exit 1). Tokenizer warnings go to stderr.
bool read_text_input(const CliArgs& args, const DecoderModel& model, int limit, const char* command, TextInput& in, std::string& error,
                     bool& usage);

// Keeps the residual stream after the last layer (AttentionObserver::on_output) for
// next_token_nll, and hands every layer on to `inner` (an AttentionCapture, say) when set.
class FinalResidual final : public AttentionObserver {
public:
    // width: the model's n_embd.
    explicit FinalResidual(int width, AttentionObserver* inner = nullptr) : inner_(inner), width_(width) {}
    void on_layer(const LayerQkv& qkv) override {
        if (inner_) inner_->on_layer(qkv);
    }
    bool wants_head(int layer, int head) const override { return inner_ && inner_->wants_head(layer, head); }
    void on_head(const HeadAttention& a) override {
        if (inner_) inner_->on_head(a);
    }
    void on_output(int t0, int n, const float* x) override;

    const std::vector<float>& residual() const { return x_; }  // (positions so far, C)

private:
    AttentionObserver* inner_;
    std::vector<float> x_;
    int width_;
};

// -ln p(ids[t + 1] | ids[0..t]) for t = 0 .. ids.size() - 2 (the predicted positions), from the
// residual of a pass over ids; returns their mean (in double).
double mean_next_token_nll(const DecoderModel& model, const std::vector<float>& residual, std::span<const int> ids,
                           std::vector<double>& nll);

}  // namespace attnlab
