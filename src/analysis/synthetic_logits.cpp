#include "analysis/synthetic_logits.h"

#include <cstddef>

#include "base/random.h"

namespace attnlab {

std::vector<double> synthetic_logits(const LogitSpec& spec, int L) {
    std::vector<double> l(static_cast<std::size_t>(L > 0 ? L : 0), 0.0);
    SplitMix64 rng(spec.seed);
    for (std::size_t i = 0; i < l.size(); ++i) {
        switch (spec.preset) {
            case LogitPreset::RandomUniform: l[i] = spec.spread * (2.0 * rng.uniform() - 1.0); break;
            case LogitPreset::RandomGaussian: l[i] = spec.spread * rng.normal(); break;
            case LogitPreset::OneStrong: l[i] = (i == 0) ? spec.spread : 0.0; break;
            case LogitPreset::TwoTied: l[i] = (i < 2) ? spec.spread : 0.0; break;
        }
    }
    return l;
}

const char* preset_name(LogitPreset preset) {
    switch (preset) {
        case LogitPreset::RandomUniform: return "Random, uniform in [-spread, spread]";
        case LogitPreset::RandomGaussian: return "Random, Gaussian with sd = spread";
        case LogitPreset::OneStrong: return "One strong token (spread) + L-1 equal others (0)";
        case LogitPreset::TwoTied: return "Two tied leaders (spread) + L-2 equal others (0)";
    }
    return "?";
}

}  // namespace attnlab
