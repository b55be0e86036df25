// The touch state machine (platform/touch_gestures.h), driven frame by frame as UiHost drives it:
// what ImGui would see each frame for a tap, a drag on a slider, a swipe, a long press and a pinch.
#include <catch2/catch.hpp>

#include <vector>

#include "platform/touch_gestures.h"

using namespace attnlab;
using Phase = TouchEvent::Phase;

namespace {

// Runs frames until nothing is pending (at most `limit`), 16 ms apart from `ms`, and returns them.
struct Run {
    TouchGestures g;
    TouchItem item;  // what "ImGui" made of the press
    int asked = 0;   // how often the machine asked
    double ms = 0;
    std::vector<TouchFrame> frames;

    TouchFrame frame() {
        ms += 16;
        frames.push_back(g.next_frame(ms, [this] {
            ++asked;
            return item;
        }));
        return frames.back();
    }
    void touch(Phase phase, float x, float y, int id = 1) { g.add({phase, id, x, y, ms}); }
    void settle(int limit = 20) {
        for (int i = 0; i < limit && g.pending(); ++i) frame();
    }
    int presses() const {
        int n = 0;
        for (size_t i = 1; i < frames.size(); ++i) n += frames[i].down && !frames[i - 1].down;
        return n + (!frames.empty() && frames[0].down);
    }
};

}  // namespace

TEST_CASE("touch: a tap presses and releases where the finger was, each in a frame of its own, then the pointer leaves", "[touch]") {
    Run r;
    r.touch(Phase::Down, 100, 50);
    r.touch(Phase::Up, 102, 51);  // both before a frame: a quick tap
    r.settle();
    REQUIRE(r.frames.size() == 3);
    CHECK((r.frames[0].present && r.frames[0].down && r.frames[0].x == 100 && r.frames[0].y == 50));
    CHECK((r.frames[1].present && !r.frames[1].down && r.frames[1].x == 102));  // released over the item: a click
    CHECK((!r.frames[2].present && !r.frames[2].down));                         // then no hover stays
    CHECK(r.asked == 0);                                                        // a tap needs no question
}

TEST_CASE("touch: a drag on an item that takes drags holds the press and follows the finger", "[touch]") {
    Run r;
    r.item.takes_drag = true;
    r.item.can_scroll_y = true;  // a slider in a pane that scrolls: still a drag
    r.touch(Phase::Down, 100, 50);
    r.touch(Phase::Move, 130, 52);  // past the slop, before ImGui has seen the press
    const TouchFrame pressed = r.frame();
    CHECK((pressed.down && pressed.x == 100));  // the press, at the start, alone in its frame
    CHECK(r.asked == 0);                        // not asked before ImGui drew the press
    const TouchFrame moved = r.frame();
    CHECK((moved.down && moved.x == 130 && moved.y == 52));
    CHECK(r.asked == 1);
    for (int x = 140; x <= 200; x += 20) r.touch(Phase::Move, static_cast<float>(x), 52);
    const TouchFrame coalesced = r.frame();  // moves between two frames: the last one counts
    CHECK((coalesced.down && coalesced.x == 200 && coalesced.scroll_x == 0 && coalesced.scroll_y == 0));
    r.touch(Phase::Up, 200, 52);
    r.settle();
    CHECK(r.presses() == 1);
    CHECK((!r.frames.back().present && !r.frames.back().down));
}

TEST_CASE("touch: a swipe over a pane that scrolls lets the press go away from the item and scrolls by the finger's travel", "[touch]") {
    Run r;
    r.item.can_scroll_y = true;  // a token chip (a button) in a pane with more below
    r.touch(Phase::Down, 100, 300);
    r.frame();
    r.touch(Phase::Move, 101, 280);  // 20 px up
    const TouchFrame let_go = r.frame();
    CHECK((!let_go.present && !let_go.down));  // released with no pointer over the chip: no click, no tooltip
    CHECK(let_go.scroll_y == -20.0f);          // and the pane follows the finger at once
    CHECK(let_go.scroll_x == 1.0f);
    r.touch(Phase::Move, 101, 250);
    r.touch(Phase::Move, 101, 200);
    const TouchFrame more = r.frame();
    CHECK((more.scroll_y == -80.0f && !more.present && !more.down));
    r.touch(Phase::Up, 101, 200);
    r.settle();
    CHECK(r.presses() == 1);
    CHECK(!r.frames.back().present);
    float total = 0;
    for (const TouchFrame& f : r.frames) total += f.scroll_y;
    CHECK(total == -100.0f);  // the whole travel, once
}

TEST_CASE("touch: a drag where nothing scrolls stays a drag (a heatmap's rows in a pane that fits)", "[touch]") {
    Run r;  // takes_drag false, nothing scrolls
    r.touch(Phase::Down, 10, 10);
    r.frame();
    r.touch(Phase::Move, 10, 60);
    const TouchFrame f = r.frame();
    CHECK((f.down && f.present && f.y == 60 && f.scroll_y == 0));
}

TEST_CASE("touch: a finger resting still is a long press: no click, and a hover that stays after the finger lifts", "[touch]") {
    Run r;
    r.touch(Phase::Down, 40, 40);
    r.frame();
    r.touch(Phase::Move, 43, 42);            // a tremble within the slop
    for (int i = 0; i < 40; ++i) r.frame();  // 640 ms
    const TouchFrame hovering = r.frames.back();
    CHECK((hovering.present && !hovering.down && hovering.x == 40 && hovering.y == 40));
    bool let_go_away = false;
    for (size_t i = 1; i < r.frames.size(); ++i)
        if (r.frames[i - 1].down && !r.frames[i].down) let_go_away = !r.frames[i].present;
    CHECK(let_go_away);  // released with the pointer away: the held item is not clicked
    r.touch(Phase::Up, 43, 42);
    r.settle();
    CHECK((r.frames.back().present && !r.frames.back().down));  // the tooltip stays readable
    r.touch(Phase::Down, 200, 200);                             // the next touch starts afresh
    const TouchFrame next = r.frame();
    CHECK((next.down && next.x == 200));
}

TEST_CASE("touch: a frame that comes late is no long press when the swipe's moves arrive just after it", "[touch]") {
    Run r;
    r.item.can_scroll_y = true;
    r.touch(Phase::Down, 100, 300);
    r.frame();    // the press
    r.ms += 700;  // the page's thread was busy: the next frame comes 700 ms later
    r.frame();
    CHECK(r.frames.back().down);     // not decided yet: moves may still be on their way
    r.touch(Phase::Move, 100, 250);  // and so they were
    const TouchFrame f = r.frame();
    CHECK((!f.present && !f.down && f.scroll_y == -50.0f));  // a swipe, not a hover
}

TEST_CASE("touch: resting on a slider is not a long press (the press stays held)", "[touch]") {
    Run r;
    r.item.takes_drag = true;
    r.touch(Phase::Down, 40, 40);
    for (int i = 0; i < 50; ++i) r.frame();
    CHECK(r.frames.back().down);
}

TEST_CASE("touch: two fingers let go of the first one's press and report the pinch's spread and where it began", "[touch]") {
    Run r;
    r.touch(Phase::Down, 100, 100, 1);
    r.frame();
    r.touch(Phase::Down, 200, 60, 2);  // spread 107.7, midpoint (150, 80)
    r.frame();
    CHECK(!r.frames.back().down);
    CHECK(r.frames.back().pinch.scale == 1.0f);
    CHECK((r.frames.back().pinch.x == 150.0f && r.frames.back().pinch.y == 80.0f));
    r.touch(Phase::Move, 250, 40, 2);  // spread 161.6: 1.5 times; the midpoint moves, the pinch's start does not
    r.frame();
    CHECK(r.frames.back().pinch.scale == Approx(1.5f));
    CHECK((r.frames.back().pinch.x == 150.0f && r.frames.back().pinch.y == 80.0f));
    r.touch(Phase::Up, 250, 40, 2);
    r.touch(Phase::Move, 300, 300, 1);  // the finger left behind does nothing
    r.touch(Phase::Up, 300, 300, 1);
    r.settle();
    CHECK(r.frames.back().pinch.scale == 0.0f);
    CHECK(r.presses() == 1);
    CHECK(!r.frames.back().down);
}

TEST_CASE("touch: a cancelled touch (the browser took it) releases without a click", "[touch]") {
    Run r;
    r.touch(Phase::Down, 10, 10);
    r.frame();
    r.touch(Phase::Cancel, 10, 10);
    const TouchFrame f = r.frame();
    CHECK((!f.down && !f.present));
}
