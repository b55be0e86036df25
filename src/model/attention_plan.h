#pragma once
// Which normalizer each attention head runs, and at what temperature: the plan a Gpt2State
// follows (PAPER.md §7: the alternatives the paper points to, run inside the model). The default
// plan, softmax at T = 1 everywhere, is GPT-2 as trained.
//
// The normalizers are those of src/analysis/normalizers.h (which defines them in double
// precision, with their Jacobians); the names, parameters and the plan's text form live here,
// below the analysis, because the engine runs them.
//
// The plan's text form (the CLI's --attention SPEC, share links, tours, a checkpoint's
// config.json "attnlab_attention"): comma-separated items HEADS=NORMALIZER[@T], later items
// overriding earlier ones:
//   HEADS       all | L.* (every head of layer L) | L.H      (0-based)
//   NORMALIZER  softmax | sparsemax | entmax-1.5 | entmax:ALPHA | ssmax:S | sa-softmax
//   @T          the head's temperature (T = 1: the model as trained), default 1
// e.g. "all=ssmax:0.43,0.*=softmax@0.5". The empty text is the default plan.
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

enum class NormalizerKind { Softmax, Sparsemax, Entmax, Ssmax, SaSoftmax };

struct Normalizer {
    NormalizerKind kind = NormalizerKind::Softmax;
    double alpha = 1.5;  // entmax only, >= 1 (alpha == 1 means softmax, 2 sparsemax)
    double scale = 1.0;  // SSMax's s

    // Equal when they compute the same weights: a parameter the kind does not use is ignored, and
    // entmax at alpha 1 is softmax, at alpha 2 sparsemax. So "entmax:1" at T = 1 is the default
    // head, and the forward pass runs it as softmax, bit for bit.
    bool operator==(const Normalizer& o) const;
};

// The names parse_normalizer() accepts, in the order a menu would show them.
inline constexpr std::array<std::string_view, 6> kNormalizerNames = {"softmax", "sparsemax", "entmax-1.5", "entmax", "ssmax", "sa-softmax"};

// Names: "softmax", "sparsemax", "entmax-1.5" (sets alpha = 1.5; "entmax15" is an alias),
// "entmax" (general alpha: keeps out.alpha as it is), "ssmax" (keeps out.scale), "sa-softmax",
// and with their parameter, "entmax:ALPHA" (ALPHA >= 1, at most 1000) and "ssmax:S" (-1000 <= S <= 1000).
// On an unknown name or a bad parameter returns false, leaves out untouched and says why in
// error, listing the valid names.
bool parse_normalizer(std::string_view name, Normalizer& out, std::string& error);

// The inverse of parse_normalizer for the bare names: parsing the name into a copy of n gives n
// back ("entmax" and "ssmax" leave their parameter to the copy).
std::string normalizer_name(const Normalizer& n);

// The name with its parameter, as the plan's text writes it: "entmax:1.3", "ssmax:0.43"; the
// others as normalizer_name (entmax at alpha 1.5 is "entmax-1.5"). Parsing it gives n back.
std::string normalizer_spec(const Normalizer& n);

// The temperatures a plan may give a head (beyond them a head is one-hot or flat to fp32).
inline constexpr double kMinHeadT = 1e-4, kMaxHeadT = 1e4;

struct HeadPlan {
    Normalizer normalizer;
    float temperature = 1.0f;
    bool operator==(const HeadPlan&) const = default;
    // Softmax at T = 1: the head as trained.
    bool is_default() const { return *this == HeadPlan{}; }
};

// One HeadPlan per (layer, head).
class AttentionPlan {
public:
    // The default plan for a model of this shape.
    AttentionPlan(int n_layer = 0, int n_head = 0);

    int n_layer() const { return n_layer_; }
    int n_head() const { return n_head_; }
    const HeadPlan& at(int layer, int head) const { return heads_[static_cast<size_t>(layer) * n_head_ + head]; }
    void set(int layer, int head, const HeadPlan& h) { heads_[static_cast<size_t>(layer) * n_head_ + head] = h; }
    // Every head softmax at T = 1.
    bool is_default() const;
    // How many heads differ from the default.
    int changed_heads() const;
    bool operator==(const AttentionPlan&) const = default;

private:
    int n_layer_ = 0, n_head_ = 0;
    std::vector<HeadPlan> heads_;
};

// Reads a plan's text (above) for a model of n_layer x n_head, starting from `out` (usually the
// default plan; later items override earlier ones and out's entries). On an error returns false,
// leaves out untouched, and names the item and what is wrong with it.
bool parse_attention_spec(std::string_view spec, int n_layer, int n_head, AttentionPlan& out, std::string& error);

// The grammar alone, with no model at hand (a share link before its model loads): every item well
// formed, layer and head numbers whole. False with the same messages as parse_attention_spec.
bool check_attention_spec(std::string_view spec, std::string& error);

// The plan as text, short: "" for the default plan; "all=..." when every head shares one
// non-default setting; otherwise items per layer ("L.*=...") where a whole layer shares one,
// and per head. Parsing it into a default plan gives the plan back.
std::string attention_spec(const AttentionPlan& plan);
// The same relative to `base` (a model's trained plan): items only for the heads where plan differs
// from base, "" when they are equal. Parsing it into a copy of base gives plan. A base of another
// shape is ignored (the plan is written whole).
std::string attention_spec(const AttentionPlan& plan, const AttentionPlan& base);

}  // namespace attnlab
