#pragma once
// Playing and recording tours: the caption card over the live view (Back, Next, the arrow
// keys), the outline around the step's widget, and the editor that turns views into steps.
// Everything stays live: the reader may drag any slider, and Next still goes to the next
// step's view.
#include <functional>
#include <string>
#include <string_view>

#include "app/file_export.h"
#include "app/session.h"
#include "app/tour/tour.h"
#include "app/widget_rects.h"

namespace attnlab {

struct TourPlayer {
    Tour tour;                     // the tour playing, or being recorded
    int step = -1;                 // the step shown; -1 = no tour playing
    std::string caption;           // the shown step's caption, its placeholders filled in
    bool highlight_drawn = false;  // the step's widget was on screen and outlined, last frame
    // The card's height beside its caption, from the frame before: what the caption leaves.
    float card_overhead = 0;
    // Where the page scrolls (a phone), the step's widget is scrolled into view once, after a
    // frame drawn since the step began (step_frame), so that its place is the step's layout.
    bool scroll_pending = false;
    int step_frame = 0;

    bool editor_open = false;
    int selected = 0;    // the editor's step
    std::string notice;  // the editor's last word ("Copied the tour link.")
};

// What the player needs of the app. The app hands one over (tour_host() in app.h) for each call,
// so that tours sit below the app's top and never include it.
struct TourHost {
    TourPlayer& player;
    Session& session;
    WidgetRects& widgets;
    FileExport* file_export;  // null when the platform cannot save files
    float& ui_scale;          // the UI scale (1 = 100%): a tour may carry its own
    // Applies a step's view as a link's would be (the app's apply_view_state, not from a link):
    // false, with the reason, when it cannot.
    std::function<bool(std::string_view view_json, std::string& error)> apply_view;
    // Shows the model's strongest learned head on `panel` once it is known.
    std::function<void(Panel panel)> request_learned_head;
    // One top-level key of window.attnlab.status() as JSON ("distance", "tokens"), for live
    // captions; "null" when there is no such key.
    std::function<std::string(std::string_view key)> status_value;
    const std::function<void(const std::string& tour_json)>& copy_tour_link;  // the page's #t= link; null natively
    const std::function<void()>& pick_tour_file;                              // the page's file picker; null natively
};

// Plays `tour` from step `step`, replacing any other.
void play_tour(const TourHost& host, Tour tour, int step = 0);
// Plays the built-in tour, "What softmax can and cannot select", from step 1 (the Tour menu,
// window.attnlab.startTour()). A failure goes to the banner.
void play_builtin_tour(const TourHost& host);
// Reads a tour's JSON (parse_tour, on the current view) and plays it from step 1. On failure
// nothing changes; from_link also puts the error in the banner.
bool apply_tour_json(const TourHost& host, std::string_view json, bool from_link, std::string& error);
// Shows step k of the tour playing: its view, then its strongest head when it asks for one.
bool show_tour_step(const TourHost& host, int k);
// Stops playing; the view stays as it is.
void leave_tour(TourPlayer& player);

// Where the whole page scrolls (a phone), scrolls the step's widget to the top of the page once
// it is drawn, so that the card has the screen below it. Inside the page's window, after the panels.
void scroll_page_to_step_widget(const TourHost& host);
// The card, the outline, the keys and the editor; once a frame, after the panels.
void draw_tour(const TourHost& host);
// The menu bar's Tour menu.
void draw_tour_menu(const TourHost& host);

// status().tour: {"playing", "step", "steps", "title", "step_title", "caption", "highlight",
// "highlight_drawn", "editor_open"}.
std::string tour_status_json(const TourPlayer& p);
// Step k as window.attnlab.tourStep() returns it: {"step", "title", "caption" (as written),
// "highlight", "strongest_head", "view"}.
std::string tour_step_json(const TourPlayer& p, int k);

}  // namespace attnlab
