#pragma once
// Playing and recording tours: the caption card over the live view (Back, Next, the arrow
// keys), the outline around the step's widget, and the editor that turns views into steps.
// Everything stays live: the reader may drag any slider, and Next still goes to the next
// step's view.
#include <string>
#include <string_view>

#include "app/tour/tour.h"

namespace attnlab {

struct AppState;

struct TourPlayer {
    Tour tour;       // the tour playing, or being recorded
    int step = -1;   // the step shown; -1 = no tour playing
    std::string caption;         // the shown step's caption, its placeholders filled in
    bool highlight_drawn = false;  // the step's widget was on screen and outlined, last frame

    bool editor_open = false;
    int selected = 0;      // the editor's step
    std::string notice;    // the editor's last word ("Copied the tour link.")
};

// Plays `tour` from step `step`, replacing any other.
void play_tour(AppState& app, Tour tour, int step = 0);
// Reads a tour's JSON (parse_tour, on the current view) and plays it from step 1. On failure
// nothing changes; from_link also puts the error in the banner.
bool apply_tour_json(AppState& app, std::string_view json, bool from_link, std::string& error);
// Shows step k of the tour playing: its view, then its strongest head when it asks for one.
bool show_tour_step(AppState& app, int k);
// Stops playing; the view stays as it is.
void leave_tour(AppState& app);

// The card, the outline, the keys and the editor; once a frame, after the panels.
void draw_tour(AppState& app);
// The menu bar's Tour menu.
void draw_tour_menu(AppState& app);

// status().tour: {"playing", "step", "steps", "title", "step_title", "caption", "highlight",
// "highlight_drawn", "editor_open"}.
std::string tour_status_json(const TourPlayer& p);
// Step k as window.attnlab.tourStep() returns it: {"step", "title", "caption" (as written),
// "highlight", "strongest_head", "view"}.
std::string tour_step_json(const TourPlayer& p, int k);

}  // namespace attnlab
