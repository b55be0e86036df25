// The plot kit's export: every plot's "↓" button and right-click menu, a tidy CSV of its
// buffered series, and a PNG of its region of the window, taken from the next rendered frame.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "app/plot/plot_internal.h"

namespace attnlab::plot {

namespace detail {

ExportState g_export;

std::string slug(std::string_view text) {
    std::string out;
    for (char c : text) {
        const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (alnum) out += c;
        else if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
        else if (!out.empty() && out.back() != '-') out += '-';
        if (out.size() >= 48) break;
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out.empty() ? "plot" : out;
}

namespace {

// Shortest of %.15g / %.17g that reads back exactly; empty for NaN (a gap), as CSV readers expect.
std::string csv_number(double v) {
    if (std::isnan(v)) return "";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", v);
    if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

std::string csv_field(std::string_view s) {
    if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

}  // namespace

// Tidy CSV: one row per data point. y2 is a band's upper edge, a box's upper whisker (y its
// lower) or a circle's radius; q1, median, q3 only for boxes.
void append_csv(std::string& csv, const std::vector<Series>& series) {
    bool boxes = false;
    for (const Series& s : series) boxes |= s.kind == Kind::Boxes;
    csv += boxes ? "series,kind,x,y,y2,q1,median,q3\n" : "series,kind,x,y,y2\n";
    for (const Series& s : series) {
        const std::string label = csv_field(s.label.rfind("##", 0) == 0 ? s.label.substr(2) : s.label);
        for (size_t i = 0; i < s.x.size(); ++i) {
            csv.append(label).append(",").append(kind_name(s.kind)).append(",").append(csv_number(s.x[i])).append(",");
            if (i < s.y.size()) csv += csv_number(s.y[i]);
            csv += ',';
            if (s.kind == Kind::Circle) csv += csv_number(s.width);
            else if (i < s.y2.size()) csv += csv_number(s.y2[i]);
            if (boxes) {
                for (int k = 0; k < 3; ++k) {
                    csv += ',';
                    if (s.kind == Kind::Boxes && 3 * i + k < s.extra.size()) csv += csv_number(s.extra[3 * i + k]);
                }
            }
            csv += '\n';
        }
    }
}

// A PNG is taken one frame later than its menu item, with the menu, tooltip and button out of the picture.
void export_controls(OpenPlot& p, bool capturing) {
    FileExport* fx = g_export.file_export;
    if (!fx) return;
    const std::string name = slug(!p.title.empty() ? std::string_view(p.title) : std::string_view(p.label));
    if (capturing) {
        fx->save_png("attnlab-" + name + ".png", PixelRect{p.min.x, p.min.y, p.max.x - p.min.x, p.max.y - p.min.y});
        g_export.capture_id = 0;
        return;
    }
    const float sc = ui_scale(), bs = ImGui::GetFontSize() * 1.25f;
    const ImVec2 bmin(p.max.x - bs - 3.0f * sc, p.min.y + 3.0f * sc), bmax(bmin.x + bs, bmin.y + bs);
    if (g_export.widgets) remember_rect(*g_export.widgets, "plot." + name + ".export", bmin, bmax);
    ImGui::PushID(static_cast<int>(p.id));
    const bool menu_open = ImGui::IsPopupOpen("##plot_export");
    if (p.hovered || menu_open) {
        const ImVec2 mouse = ImGui::GetIO().MousePos;
        const bool over = p.hovered && mouse.x >= bmin.x && mouse.x <= bmax.x && mouse.y >= bmin.y && mouse.y <= bmax.y;
        ImDrawList* dl = ImGui::GetWindowDrawList();
        dl->AddRectFilled(bmin, bmax, over ? IM_COL32(210, 225, 240, 255) : IM_COL32(255, 255, 255, 230), 3.0f * sc);
        dl->AddRect(bmin, bmax, IM_COL32(0, 0, 0, 90), 3.0f * sc);
        // A download sign: an arrow down onto a tray.
        const float cx = (bmin.x + bmax.x) * 0.5f, t = 1.5f * sc;
        const ImU32 ink = IM_COL32(0, 0, 0, 200);
        dl->AddLine(ImVec2(cx, bmin.y + bs * 0.2f), ImVec2(cx, bmin.y + bs * 0.62f), ink, t);
        dl->AddTriangleFilled(ImVec2(cx - bs * 0.2f, bmin.y + bs * 0.5f), ImVec2(cx + bs * 0.2f, bmin.y + bs * 0.5f),
                              ImVec2(cx, bmin.y + bs * 0.72f), ink);
        dl->AddLine(ImVec2(bmin.x + bs * 0.22f, bmin.y + bs * 0.8f), ImVec2(bmax.x - bs * 0.22f, bmin.y + bs * 0.8f), ink, t);
        if (over) {
            ImGui::SetTooltip("Export this plot (PNG picture or CSV data); right-click the plot for the same menu");
            if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) ImGui::OpenPopup("##plot_export");
        }
    }
    if (ImGui::BeginPopup("##plot_export")) {
        g_export.menu_frame = ImGui::GetFrameCount();
        // On its first frame a popup is measured, then moved to fit the screen: its items'
        // places are final from the second frame on (export_pending() asks for that frame).
        g_export.menu_appearing = ImGui::IsWindowAppearing();
        WidgetRects* rects = g_export.menu_appearing ? nullptr : g_export.widgets;
        ImGui::TextDisabled("%s", name.c_str());
        bool chosen = false;
        if (ImGui::MenuItem("Export PNG")) {
            g_export.capture_id = p.id;
            chosen = true;
        }
        if (rects) remember_last_item(*rects, "plot.export_png");
        if (ImGui::MenuItem("Export CSV")) {
            std::string csv;
            append_csv(csv, p.series);
            fx->save_text("attnlab-" + name + ".csv", "text/csv", csv);
            chosen = true;
        }
        if (rects) remember_last_item(*rects, "plot.export_csv");
        // The menu closes now; scripts must not aim at its items any more.
        if (chosen && g_export.widgets) {
            g_export.widgets->erase("plot.export_png");
            g_export.widgets->erase("plot.export_csv");
        }
        ImGui::EndPopup();
    } else if (g_export.menu_frame != ImGui::GetFrameCount()) {
        // No menu open this frame (so far): scripts must not aim at a closed menu's items.
        g_export.menu_appearing = false;
        if (g_export.widgets) {
            g_export.widgets->erase("plot.export_png");
            g_export.widgets->erase("plot.export_csv");
        }
    }
    ImGui::PopID();
}

}  // namespace detail

using detail::g_export;

void set_file_export(FileExport* file_export) { g_export.file_export = file_export; }
void set_widget_rects(WidgetRects* rects) { g_export.widgets = rects; }
bool export_pending() { return g_export.capture_id != 0 || g_export.menu_appearing; }

}  // namespace attnlab::plot
