#include "model/attention_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace attnlab {

namespace {

// Limits of the plan's parameters: wide enough for every experiment, narrow enough that the
// forward pass stays finite in fp32.
constexpr double kMinT = kMinHeadT, kMaxT = kMaxHeadT;
constexpr double kMaxAlpha = 1000.0;
constexpr double kMaxScale = 1000.0;
constexpr int kMaxIndex = 1 << 16;         // layers and heads, when no model is at hand
constexpr size_t kMaxSpecBytes = 1 << 16;  // a plan of every head of GPT-2 XL fits many times

// 'text', in quotes (built by hand: GCC 12 reports its own inlined operator+ on short literals
// as overlapping copies, -Wrestrict).
std::string quoted(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    out.push_back('\'');
    out.append(s);
    out.push_back('\'');
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// A whole number or decimal, nothing after it; false for anything else (a locale-free strtod on a
// copy, so that "1e400", "nan" and "0x1p3" are judged by the range checks below, not by luck).
bool read_number(std::string_view s, double& out) {
    if (s.empty() || s.size() > 64) return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) return false;
    const std::string copy(s);
    char* end = nullptr;
    out = std::strtod(copy.c_str(), &end);
    return end == copy.c_str() + copy.size();
}

bool read_index(std::string_view s, int limit, int& out) {
    if (s.empty() || s.size() > 9) return false;
    int v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
    }
    if (v >= limit) return false;
    out = v;
    return true;
}

// At least as many digits as v has before the point, so that %g writes 1000 and 10000 as such,
// not as 1e+03 and 1e+04 (shorter, and read back the same, but not what anyone typed).
int whole_digits(double v) {
    const double a = std::abs(v);
    return a >= 1.0 && a < 1e17 ? 1 + static_cast<int>(std::floor(std::log10(a))) : 1;
}

// The shortest %g form that reads back as exactly v.
std::string shortest(double v, int max_digits) {
    char buf[40];
    for (int digits = std::min(whole_digits(v), max_digits); digits <= max_digits; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}
std::string shortest_float(float v) {
    char buf[40];
    for (int digits = std::min(whole_digits(v), 9); digits <= 9; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(v));
        if (static_cast<float>(std::strtod(buf, nullptr)) == v) break;
    }
    return buf;
}

std::string valid_names() {
    std::string s;
    for (std::string_view n : kNormalizerNames)
        s.append(s.empty() ? "" : ", ").append(n == "entmax" ? "entmax:ALPHA" : n == "ssmax" ? "ssmax:S" : n);
    return s;
}

std::string head_spec(const HeadPlan& h) {
    std::string s = normalizer_spec(h.normalizer);
    if (h.temperature != 1.0f) s.append("@").append(shortest_float(h.temperature));
    return s;
}

}  // namespace

namespace {

// Entmax at alpha 1 is softmax and at alpha 2 sparsemax (normalizers.h): the kind that computes it.
NormalizerKind effective_kind(const Normalizer& n) {
    if (n.kind == NormalizerKind::Entmax && n.alpha == 1.0) return NormalizerKind::Softmax;
    if (n.kind == NormalizerKind::Entmax && n.alpha == 2.0) return NormalizerKind::Sparsemax;
    return n.kind;
}

}  // namespace

bool Normalizer::operator==(const Normalizer& o) const {
    const NormalizerKind k = effective_kind(*this);
    if (k != effective_kind(o)) return false;
    if (k == NormalizerKind::Entmax) return alpha == o.alpha;
    if (k == NormalizerKind::Ssmax) return scale == o.scale;
    return true;
}

bool parse_normalizer(std::string_view name, Normalizer& out, std::string& error) {
    Normalizer n = out;
    const size_t colon = name.find(':');
    const std::string_view base = name.substr(0, colon);
    if (colon != std::string_view::npos) {
        const std::string_view param = name.substr(colon + 1);
        double v = 0.0;
        if (base == "entmax") {
            if (!read_number(param, v) || !(v >= 1.0 && v <= kMaxAlpha)) {
                error = "entmax's alpha must be a number from 1 to " + shortest(kMaxAlpha, 6) + ", not '" + std::string(param) + "'";
                return false;
            }
            n.kind = NormalizerKind::Entmax;
            n.alpha = v;
        } else if (base == "ssmax") {
            if (!read_number(param, v) || !(std::abs(v) <= kMaxScale)) {
                const std::string limit = shortest(kMaxScale, 6);
                error = "ssmax's scale s must be a number from -";
                error.append(limit).append(" to ").append(limit).append(", not '").append(param).append("'");
                return false;
            }
            n.kind = NormalizerKind::Ssmax;
            n.scale = v;
        } else {
            error = "only entmax:ALPHA and ssmax:S take a parameter, not " + quoted(name);
            return false;
        }
        out = n;
        return true;
    }
    if (name == "softmax") n.kind = NormalizerKind::Softmax;
    else if (name == "sparsemax") n.kind = NormalizerKind::Sparsemax;
    else if (name == "entmax-1.5" || name == "entmax15") n.kind = NormalizerKind::Entmax, n.alpha = 1.5;
    else if (name == "entmax") n.kind = NormalizerKind::Entmax;
    else if (name == "ssmax") n.kind = NormalizerKind::Ssmax;
    else if (name == "sa-softmax") n.kind = NormalizerKind::SaSoftmax;
    else {
        error = "unknown normalizer '" + std::string(name) + "' (valid: " + valid_names() + "; entmax15 = entmax-1.5)";
        return false;
    }
    out = n;
    return true;
}

std::string normalizer_name(const Normalizer& n) {
    switch (n.kind) {
        case NormalizerKind::Softmax: return "softmax";
        case NormalizerKind::Sparsemax: return "sparsemax";
        case NormalizerKind::Entmax: return n.alpha == 1.5 ? "entmax-1.5" : "entmax";
        case NormalizerKind::Ssmax: return "ssmax";
        case NormalizerKind::SaSoftmax: return "sa-softmax";
    }
    return "softmax";
}

std::string normalizer_spec(const Normalizer& n) {
    if (n.kind == NormalizerKind::Entmax && n.alpha != 1.5) return "entmax:" + shortest(n.alpha, 17);
    if (n.kind == NormalizerKind::Ssmax) return "ssmax:" + shortest(n.scale, 17);
    return normalizer_name(n);
}

AttentionPlan::AttentionPlan(int n_layer, int n_head)
    : n_layer_(n_layer), n_head_(n_head), heads_(static_cast<size_t>(n_layer) * static_cast<size_t>(n_head)) {}

bool AttentionPlan::is_default() const { return changed_heads() == 0; }

int AttentionPlan::changed_heads() const {
    int n = 0;
    for (const HeadPlan& h : heads_) n += !h.is_default();
    return n;
}

namespace {

// Reads the items of a plan's text for a model of n_layer x n_head, handing each to set(layer
// range, head range, plan) in order. False with an error that names the item.
template <typename Set>
bool walk_spec(std::string_view spec, int n_layer, int n_head, Set&& set, std::string& error) {
    spec = trim(spec);
    if (spec.empty()) return true;
    int index = 0;
    for (size_t start = 0; start <= spec.size(); ++index) {
        const size_t comma = spec.find(',', start);
        const std::string_view item = trim(spec.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        start = comma == std::string_view::npos ? spec.size() + 1 : comma + 1;
        const std::string where = "item " + std::to_string(index + 1) + " " + quoted(item) + ": ";
        if (item.empty()) {
            error = "item " + std::to_string(index + 1) + " is empty (items are HEADS=NORMALIZER[@T], separated by commas)";
            return false;
        }
        const size_t eq = item.find('=');
        if (eq == std::string_view::npos) {
            error = where + "no '=' (an item is HEADS=NORMALIZER[@T], e.g. all=sparsemax or 3.5=ssmax:0.43@2)";
            return false;
        }
        const std::string_view heads = trim(item.substr(0, eq)), rest = trim(item.substr(eq + 1));
        int l0 = 0, l1 = n_layer, h0 = 0, h1 = n_head;
        if (heads != "all") {
            const size_t dot = heads.find('.');
            int layer = 0, head = 0;
            if (dot == std::string_view::npos || !read_index(heads.substr(0, dot), n_layer, layer)) {
                error = where + quoted(heads) + " names no heads of this model (HEADS is all, L.* or L.H, with layer L from 0 to " +
                        std::to_string(n_layer - 1) + ")";
                return false;
            }
            l0 = layer, l1 = layer + 1;
            const std::string_view h = heads.substr(dot + 1);
            if (h != "*") {
                if (!read_index(h, n_head, head)) {
                    error = where + "head " + quoted(h) + " is not * or a head from 0 to " + std::to_string(n_head - 1);
                    return false;
                }
                h0 = head, h1 = head + 1;
            }
        }
        const size_t at = rest.rfind('@');
        HeadPlan hp;
        if (!parse_normalizer(trim(rest.substr(0, at)), hp.normalizer, error)) {
            error = where + error;
            return false;
        }
        if (at != std::string_view::npos) {
            double T = 0.0;
            const std::string_view t = trim(rest.substr(at + 1));
            if (!read_number(t, T) || !(T >= kMinT && T <= kMaxT)) {
                error = where + "the temperature after '@' must be a number from " + shortest(kMinT, 6) + " to " + shortest(kMaxT, 6) +
                        ", not " + quoted(t);
                return false;
            }
            hp.temperature = static_cast<float>(T);
        }
        set(l0, l1, h0, h1, hp);
    }
    return true;
}

}  // namespace

bool parse_attention_spec(std::string_view spec, int n_layer, int n_head, AttentionPlan& out, std::string& error) {
    AttentionPlan plan = out.n_layer() == n_layer && out.n_head() == n_head ? out : AttentionPlan(n_layer, n_head);
    const auto set = [&](int l0, int l1, int h0, int h1, const HeadPlan& hp) {
        for (int l = l0; l < l1; ++l)
            for (int h = h0; h < h1; ++h) plan.set(l, h, hp);
    };
    if (!walk_spec(spec, n_layer, n_head, set, error)) return false;
    out = std::move(plan);
    return true;
}

bool check_attention_spec(std::string_view spec, std::string& error) {
    if (spec.size() > kMaxSpecBytes) {
        error = "the plan's text is longer than " + std::to_string(kMaxSpecBytes) + " bytes";
        return false;
    }
    return walk_spec(
        spec, kMaxIndex, kMaxIndex, [](int, int, int, int, const HeadPlan&) {}, error);
}

std::string attention_spec(const AttentionPlan& plan) { return attention_spec(plan, AttentionPlan(plan.n_layer(), plan.n_head())); }

std::string attention_spec(const AttentionPlan& plan, const AttentionPlan& base) {
    const int L = plan.n_layer(), H = plan.n_head();
    if (plan == base || L == 0 || H == 0) return "";
    // A base of another shape says nothing of these heads: the plan is written whole.
    if (base.n_layer() != L || base.n_head() != H) return attention_spec(plan);
    const HeadPlan& first = plan.at(0, 0);
    bool all_same = true;
    for (int l = 0; l < L && all_same; ++l)
        for (int h = 0; h < H && all_same; ++h) all_same = plan.at(l, h) == first;
    if (all_same) return "all=" + head_spec(first);
    std::string out;
    const auto item = [&](const std::string& heads, const HeadPlan& hp) {
        out.append(out.empty() ? "" : ",").append(heads).append("=").append(head_spec(hp));
    };
    // A head is written only where it differs from the base: the text says what was changed.
    const auto changed = [&](int l, int h) { return !(plan.at(l, h) == base.at(l, h)); };
    for (int l = 0; l < L; ++l) {
        bool layer_same = true, layer_changed = changed(l, 0);
        for (int h = 1; h < H; ++h) {
            layer_same = layer_same && plan.at(l, h) == plan.at(l, 0);
            layer_changed = layer_changed || changed(l, h);
        }
        if (!layer_changed) continue;
        // A whole layer in one item when it shares one setting and the item rewrites no head of
        // the base that the plan keeps (it would write the same value back, so it is still exact).
        if (layer_same) {
            item(std::to_string(l) + ".*", plan.at(l, 0));
            continue;
        }
        for (int h = 0; h < H; ++h)
            if (changed(l, h)) item(std::to_string(l) + "." + std::to_string(h), plan.at(l, h));
    }
    return out;
}

}  // namespace attnlab
