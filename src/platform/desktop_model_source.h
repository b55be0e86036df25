#pragma once
// The desktop's ModelSource: checkpoints are files on disk, mapped into memory (no download,
// no cache). "Load" takes a path to a .safetensors file (or the folder holding model.safetensors);
// config.json beside it is read when present. Web addresses get a readable refusal.
#include "app/model_source.h"

namespace attnlab {

class DesktopModelSource : public ModelSource {
public:
    void probe(const std::string& path) override;
    void download(const std::string& path) override;
    void cancel() override;
    void pick_file() override {}
    bool can_pick_file() const override { return false; }
    void clear_cache() override {}
    bool has_cache() const override { return false; }
    FetchStatus status() const override { return status_; }
    bool take_result(ModelFiles& files) override;

private:
    void fail(const std::string& path, std::string message);

    FetchStatus status_;
    ModelBytes bytes_;
    std::string config_json_, source_;
};

}  // namespace attnlab
