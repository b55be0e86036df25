#pragma once
// Fingers on a touch screen, turned into the one mouse ImGui understands. The GLFW port of
// Emscripten 3.1.6 passes no touch moves, so the page hands every touch to UiHost
// (web/touch_input.js), which runs them through this state machine once per frame:
//   a tap              press and release where the finger was; then the pointer leaves, so that no
//                      hover (a tooltip) stays behind
//   a drag on a slider the press is held and the pointer follows the finger (sliders, drags, a text
//                      field's selection, and anything pressed in a pane that cannot scroll)
//   a swipe            the press is let go away from the item (no click), the pointer leaves (no
//                      hover, no tooltip), and the finger's travel scrolls the pane where it started
//   a long press       the press is let go away from the item, and the pointer hovers where the
//                      finger is: what a mouse hover shows (a token's id, a plot's value) shows, and
//                      stays once the finger lifts, until the next touch
//   two fingers        a pinch: the ratio of their spread to the spread at its start, and their
//                      midpoint at its start (what the pinch is over: the map zooms, the page scales)
// ImGui sees one position and one button state per frame, so each press and each release gets a
// frame of its own, and the choice between a drag and a swipe waits until ImGui has seen the press
// (TouchItem says what it made of it). No ImGui here: UiHost asks and applies.
#include <deque>
#include <functional>
#include <map>

namespace attnlab {

struct TouchEvent {
    enum class Phase { Down, Move, Up, Cancel };
    Phase phase = Phase::Down;
    int id = 0;          // the finger (Touch.identifier)
    float x = 0, y = 0;  // ImGui pixels (backing pixels on the web)
    double ms = 0;       // when, on the clock next_frame is given
};

// What ImGui made of the press, in the frame after it.
struct TouchItem {
    bool takes_drag = false;                          // the pressed item follows a dragging pointer: a slider, a drag, a text field
    bool can_scroll_x = false, can_scroll_y = false;  // the window under the finger, or one around it, can scroll
};

// Two fingers: their spread over their spread at the start (0 when there is no pinch), and their
// midpoint at the start, in pixels: what the pinch is over.
struct TouchPinch {
    float scale = 0;
    float x = 0, y = 0;
};

// The mouse for one frame.
struct TouchFrame {
    bool present = false;  // the pointer is at (x, y); false: it has left the canvas
    float x = 0, y = 0;
    bool down = false;                 // the left button
    float scroll_x = 0, scroll_y = 0;  // the finger's travel this frame, in pixels (down and right positive)
    TouchPinch pinch;
};

class TouchGestures {
public:
    struct Settings {
        float slop = 10.0f;            // pixels a finger may wander and still be tapping
        double long_press_ms = 500.0;  // a finger held still this long asks for a hover
    };
    TouchGestures() = default;
    void set_slop(float pixels) { settings_.slop = pixels; }

    void add(const TouchEvent& e) { events_.push_back(e); }

    // The mouse for the next frame, at `now_ms`: takes as many touches as one frame can show (one
    // press or release at most). `item` is asked only once ImGui has drawn a frame with the press.
    TouchFrame next_frame(double now_ms, const std::function<TouchItem()>& item);

    // More frames are needed: touches or steps are waiting, or a finger is down.
    bool pending() const { return !events_.empty() || !steps_.empty() || !fingers_.empty(); }

    // What the fingers are doing: "idle", "pressed", "dragging", "scrolling", "hovering",
    // "pinching", "ignoring" (the finger left after a pinch).
    const char* gesture() const;

private:
    enum class State { Idle, Pressed, Dragging, Scrolling, Hovering, Pinching, Ignoring };
    // One frame's change to the mouse; a step that presses or releases ends its frame.
    struct Step {
        enum class Pointer { Keep, At, Away } pointer = Pointer::Keep;
        float x = 0, y = 0;
        int button = -1;  // -1 unchanged, 0 released, 1 pressed
        float scroll_x = 0, scroll_y = 0;
        float pinch = -1;  // -1 unchanged
    };
    void step_pinch(float scale) { steps_.push_back({Step::Pointer::Keep, 0, 0, -1, 0, 0, scale}); }

    void handle(const TouchEvent& e, const std::function<TouchItem()>& item);
    void decide_after_slop(const TouchEvent& e, const TouchItem& it);
    bool needs_item(const TouchEvent& e) const;
    float spread() const;
    void step_at(float x, float y, int button = -1) { steps_.push_back({Step::Pointer::At, x, y, button}); }
    void step_away(int button = -1) { steps_.push_back({Step::Pointer::Away, 0, 0, button}); }

    Settings settings_;
    std::deque<TouchEvent> events_;
    std::deque<Step> steps_;
    TouchFrame mouse_;  // the mouse as the last frame left it (scroll zero)
    State state_ = State::Idle;
    int primary_ = 0;  // the finger that pressed
    float start_x_ = 0, start_y_ = 0, last_x_ = 0, last_y_ = 0;
    double down_ms_ = 0;
    bool long_press_due_ = false;  // a frame has seen the long press's deadline pass
    float spread0_ = 1;
    float pinch_x_ = 0, pinch_y_ = 0;                 // the pinch's midpoint at its start
    std::map<int, std::pair<float, float>> fingers_;  // on the screen now
};

}  // namespace attnlab
