#include "platform/touch_gestures.h"

#include <cmath>

namespace attnlab {

TouchFrame TouchGestures::next_frame(double now_ms, const std::function<TouchItem()>& item) {
    TouchFrame f = mouse_;
    f.scroll_x = f.scroll_y = 0;
    bool button_changed = false;
    for (;;) {
        if (!steps_.empty()) {
            const Step& s = steps_.front();
            // A press or a release is seen where the pointer is in its frame: nothing moves the
            // pointer or changes the button again until the next frame.
            if (button_changed && (s.button >= 0 || s.pointer != Step::Pointer::Keep)) break;
            if (s.pointer == Step::Pointer::At) f.present = true, f.x = s.x, f.y = s.y;
            if (s.pointer == Step::Pointer::Away) f.present = false;
            if (s.button >= 0) f.down = s.button == 1, button_changed = true;
            f.scroll_x += s.scroll_x;
            f.scroll_y += s.scroll_y;
            if (s.pinch >= 0) f.pinch = {s.pinch, pinch_x_, pinch_y_};
            steps_.pop_front();
            continue;
        }
        if (!events_.empty()) {
            // ImGui must have drawn a frame with the press before it can say what was pressed.
            if (button_changed && needs_item(events_.front())) break;
            handle(events_.front(), item);
            events_.pop_front();
            continue;
        }
        // A finger resting on something that does not follow drags: a long press, a hover. Decided
        // a frame after the deadline has passed: a frame that comes late (the page's thread was
        // busy) may come before the moves the browser still holds, and a swipe is no long press.
        if (state_ == State::Pressed && !button_changed && now_ms - down_ms_ >= settings_.long_press_ms) {
            if (!long_press_due_) {
                long_press_due_ = true;
            } else if (!item().takes_drag) {
                state_ = State::Hovering;
                step_away(0);                 // let go where no item is: no click
                step_at(start_x_, start_y_);  // then hover where the finger is
                continue;
            }
        }
        break;
    }
    mouse_ = f;
    mouse_.scroll_x = mouse_.scroll_y = 0;
    return f;
}

const char* TouchGestures::gesture() const {
    switch (state_) {
        case State::Idle: return "idle";
        case State::Pressed: return "pressed";
        case State::Dragging: return "dragging";
        case State::Scrolling: return "scrolling";
        case State::Hovering: return "hovering";
        case State::Pinching: return "pinching";
        case State::Ignoring: return "ignoring";
    }
    return "";
}

bool TouchGestures::needs_item(const TouchEvent& e) const {
    return state_ == State::Pressed && e.id == primary_ && e.phase == TouchEvent::Phase::Move &&
           std::hypot(e.x - start_x_, e.y - start_y_) > settings_.slop;
}

float TouchGestures::spread() const {
    if (fingers_.size() < 2) return 1.0f;
    const auto a = fingers_.begin()->second, b = std::next(fingers_.begin())->second;
    return std::max(1.0f, std::hypot(a.first - b.first, a.second - b.second));
}

// The finger has left the tap's circle: follow it with the press held, or scroll.
void TouchGestures::decide_after_slop(const TouchEvent& e, const TouchItem& it) {
    const float dx = e.x - start_x_, dy = e.y - start_y_;
    const bool scrolls = std::abs(dy) >= std::abs(dx) ? it.can_scroll_y || it.can_scroll_x : it.can_scroll_x || it.can_scroll_y;
    if (it.takes_drag || !scrolls) {
        state_ = State::Dragging;
        step_at(e.x, e.y);
        return;
    }
    state_ = State::Scrolling;
    step_away(0);  // the press ends away from the item: a swipe clicks nothing
    steps_.push_back({Step::Pointer::Keep, 0, 0, -1, dx, dy});
    last_x_ = e.x;
    last_y_ = e.y;
}

void TouchGestures::handle(const TouchEvent& e, const std::function<TouchItem()>& item) {
    using Phase = TouchEvent::Phase;
    if (e.phase == Phase::Down) {
        fingers_[e.id] = {e.x, e.y};
        if (fingers_.size() == 1 && (state_ == State::Idle || state_ == State::Hovering)) {
            state_ = State::Pressed;
            primary_ = e.id;
            start_x_ = last_x_ = e.x;
            start_y_ = last_y_ = e.y;
            down_ms_ = e.ms;
            long_press_due_ = false;
            step_at(e.x, e.y, 1);
        } else if (fingers_.size() == 2 && state_ != State::Ignoring && state_ != State::Pinching) {
            // A second finger: whatever the first one started is let go, without a click.
            if (state_ == State::Pressed || state_ == State::Dragging) step_away(0);
            else step_away();
            state_ = State::Pinching;
            spread0_ = spread();
            const auto a = fingers_.begin()->second, b = std::next(fingers_.begin())->second;
            pinch_x_ = (a.first + b.first) * 0.5f;
            pinch_y_ = (a.second + b.second) * 0.5f;
            step_pinch(1.0f);
        }
        return;
    }
    const auto finger = fingers_.find(e.id);
    if (finger == fingers_.end()) return;  // began before we listened, or a third finger's end
    if (e.phase == Phase::Move) {
        finger->second = {e.x, e.y};
        switch (state_) {
            case State::Pressed:
                if (e.id == primary_ && std::hypot(e.x - start_x_, e.y - start_y_) > settings_.slop) decide_after_slop(e, item());
                break;
            case State::Dragging:
            case State::Hovering:
                if (e.id == primary_) step_at(e.x, e.y);
                break;
            case State::Scrolling:
                if (e.id == primary_) {
                    steps_.push_back({Step::Pointer::Keep, 0, 0, -1, e.x - last_x_, e.y - last_y_});
                    last_x_ = e.x;
                    last_y_ = e.y;
                }
                break;
            case State::Pinching: step_pinch(spread() / spread0_); break;
            case State::Idle:
            case State::Ignoring: break;
        }
        return;
    }
    // Up or Cancel.
    fingers_.erase(finger);
    const bool primary = e.id == primary_;
    switch (state_) {
        case State::Pressed:
        case State::Dragging:
            if (!primary) break;
            if (e.phase == Phase::Cancel) step_away(0);  // the browser took the touch: no click
            else step_at(e.x, e.y, 0);
            step_away();
            state_ = State::Idle;
            break;
        case State::Scrolling:
            if (primary) state_ = State::Idle;
            break;
        case State::Hovering:
            if (primary) state_ = State::Idle;  // the hover stays until the next touch
            break;
        case State::Pinching:
            step_pinch(0.0f);
            state_ = fingers_.empty() ? State::Idle : State::Ignoring;  // the last finger then does nothing
            break;
        case State::Ignoring:
            if (fingers_.empty()) state_ = State::Idle;
            break;
        case State::Idle: break;
    }
}

}  // namespace attnlab
