#pragma once
// The browser's FileExport: a download through a Blob URL and <a download>. PNGs are read back
// from the WebGL canvas right after the frame that follows the request is rendered (call
// after_render() from UiHost's after-render callback), cropped, and encoded by the browser
// (canvas.toBlob). The last text export stays readable as window.attnlab.lastExport().
#include <string>
#include <vector>

#include "app/file_export.h"
#include "platform/ui_host.h"

namespace attnlab {

class WebFileExport : public FileExport {
public:
    WebFileExport();
    ~WebFileExport() override;

    void save_text(const std::string& file_name, std::string_view mime_type, std::string_view content) override;
    void save_png(const std::string& file_name, PixelRect rect) override;
    std::string last_message() const override { return message_; }
    ExportRecord last_export() const override { return record_; }

    void after_render(int framebuffer_width, int framebuffer_height);

    // The page's callback once the browser has made the PNG's bytes (attnlab_export_saved).
    void on_saved(const char* name, const char* mime, double bytes);

private:
    std::vector<PlotGrab> pending_;
    std::string message_;
    ExportRecord record_;
};

}  // namespace attnlab
