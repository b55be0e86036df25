#pragma once
// The desktop's FileExport: files go to the working folder (never overwriting: "plot-2.csv"
// when "plot.csv" exists). PNGs are read back from the framebuffer right after the frame that
// follows the request is rendered: call after_render() from UiHost's after-render callback.
#include <string>
#include <vector>

#include "app/file_export.h"
#include "platform/ui_host.h"

namespace attnlab {

class DesktopFileExport : public FileExport {
public:
    explicit DesktopFileExport(std::string folder = ".") : folder_(std::move(folder)) {}

    void save_text(const std::string& file_name, std::string_view mime_type, std::string_view content) override;
    void save_png(const std::string& file_name, PixelRect rect) override;
    std::string last_message() const override { return message_; }
    ExportRecord last_export() const override { return record_; }

    // From UiHost::set_after_render_callback: framebuffer size in pixels.
    void after_render(int framebuffer_width, int framebuffer_height);

private:
    std::string folder_;
    std::vector<PlotGrab> pending_;
    std::string message_;
    ExportRecord record_;

    bool write(const std::string& file_name, std::string_view mime, const void* data, size_t size);
};

}  // namespace attnlab
