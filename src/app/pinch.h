#pragma once
// Two fingers pinching on a touch screen (the page hands them over; the desktop has none). What
// the pinch starts over takes it, in its first frame: the attention map zooms about the fingers'
// midpoint; anywhere else the UI scale follows the spread (draw_app).
namespace attnlab {

struct Pinch {
    float scale = 0.0f;        // the fingers' spread over their spread at the start; 0: no pinch
    float x = 0.0f, y = 0.0f;  // their midpoint at the start, in ImGui pixels
    enum class Taker { None, Map, UiScale } taker = Taker::None;
    float ui_scale_at_start = 0.0f;  // while the UI scale takes it
};

}  // namespace attnlab
