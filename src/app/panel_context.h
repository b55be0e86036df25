#pragma once
// What every panel's draw function is handed.
#include "app/file_export.h"
#include "app/pinch.h"
#include "app/session.h"
#include "app/widget_rects.h"

namespace attnlab {

struct PanelContext {
    Session& session;
    WidgetRects& widgets;     // named widget places, for window.attnlab.status() and tests
    FileExport* file_export;  // null when the platform cannot save files
    Pinch& pinch;             // two fingers on a touch screen: the map takes one that starts over it
};

}  // namespace attnlab
