#pragma once
// The attention temperature T, set the same way in every panel: a logarithmic slider (Ctrl+click
// to type a value), T = 1 being the model as trained.

namespace attnlab {

// The range the Attention map and the playground offer.
inline constexpr double kMinTemperature = 0.01, kMaxTemperature = 100.0;

// A slider for T over [lo, hi], as wide as the next item width says. True when it moved T.
bool temperature_slider(const char* label, double& T, double lo = kMinTemperature, double hi = kMaxTemperature);

}  // namespace attnlab
