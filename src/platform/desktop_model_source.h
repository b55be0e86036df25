#pragma once
// The desktop's ModelSource: checkpoints are files on disk (no download, no cache), in Hugging
// Face's layout as the page's hub reads it. "Load" takes a .safetensors file, a
// model.safetensors.index.json, or the folder holding either; config.json, tokenizer.json and
// tokenizer_config.json beside it are read when present. One file is mapped; a sharded
// checkpoint's files are read into one buffer, as the page receives them. Web addresses get a
// readable refusal.
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
    ModelFiles files_;  // what take_result() hands over
};

}  // namespace attnlab
