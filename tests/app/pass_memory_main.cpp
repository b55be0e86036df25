// attnlab_pass_memory MODEL_DIR TOKENS [--whole-map]: what the page does on a pass, natively and
// without a window, then the process's peak resident memory. The session's own steps run it as
// the page's frame loop does: the forward pass with its capture (and the baseline, which is the
// same pass under the trained plan), the text's perplexity, the all-heads summaries, the head
// grid's thumbnails, and the attention panel's map of the open head (layer 0, head 0): its block
// overview by max and by sum, and a zoomed window of single cells (app/work/head_map.h), over
// TOKENS random ids (seed 1). Prints one JSON line. tests/app/pass_memory_test.mjs runs it at
// three lengths and checks that the peak grows linearly in the length.
//
// --whole-map: the open head's map as the panel kept it before issue 38, its L x L scores and
// weights (AttentionCapture::scores, normalize_causal_rows), so that the test shows its check
// catches an L^2 term.
#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "analysis/attention_map.h"
#include "app/session.h"
#include "app/work/head_map.h"
#include "app/work/head_summaries.h"
#include "app/work/head_thumbnails.h"
#include "app/work/model_tasks.h"
#include "base/random.h"
#include "platform/whole_file.h"

namespace {

int fail(const std::string& message) {
    std::fprintf(stderr, "attnlab_pass_memory: %s\n", message.c_str());
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace attnlab;
    const bool whole_map = argc == 4 && std::string(argv[3]) == "--whole-map";
    if (argc != 3 && !whole_map) return fail("usage: attnlab_pass_memory MODEL_DIR TOKENS [--whole-map]");
    const std::string dir = argv[1];
    const int n = std::atoi(argv[2]);
    if (n < 2) return fail("TOKENS must be at least 2");
    // Every block of 1 MB or more is mapped, and unmapped when freed: glibc otherwise raises
    // this threshold as large blocks are freed and then keeps freed memory in its heap, so that
    // the peak would depend on which sizes crossed the moving threshold at which length.
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    // The page holds the checkpoint's bytes in its heap: so does this.
    auto bytes = std::make_shared<std::string>();
    std::string config, error;
    if (!read_whole_file(dir + "/model.safetensors", *bytes, error) || !read_whole_file(dir + "/config.json", config, error))
        return fail(error);
    ModelFiles files;
    files.bytes = ModelBytes{bytes, {reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()}};
    files.config_json = config;
    files.source = dir;

    Session s;
    s.model = load_model(std::move(files), error);
    if (!s.model) return fail(error);
    const int vocab = s.model->shape.vocab;
    SplitMix64 rng(1);
    for (int i = 0; i < n; ++i) s.tokens.push_back(static_cast<int>(rng.uniform() * vocab));
    s.tokens_text = s.view.text;  // the tokens stand for the view's text: keep_forward_current keeps them

    HeadThumbnails thumbnails;
    for (;;) {
        keep_forward_current(s);
        keep_summaries_current(s);
        keep_head_thumbnails(thumbnails, s);
        bool busy = s.model_work.pump(s, 50);
        busy = s.background.pump(s, 50) || busy;
        busy = thumbnails.work.pump(s, 50) || busy;
        if (!s.message.empty()) return fail(s.message);
        const bool done = s.forward && !s.perplexities.empty() && s.summaries && s.summaries->complete && thumbnails.done;
        if (done && !busy) break;
        // A frame's pause: with threads the tasks run on workers, which a spinning loop would slow.
        if (TaskRunner::threaded()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // The attention panel's open head, as the panel asks for it: the whole map in 512 x 512 max
    // blocks, the same by sum, then zoomed to 64 x 64 single cells at the last query (map_max: the
    // largest weight there, queries and keys L-64..L-1).
    const int L = s.forward->capture.length();
    double map_max = 0.0;
    if (whole_map) {
        Normalizer softmax;
        const std::vector<float> scores = s.forward->capture.scores(0, 0);
        std::vector<float> weights;
        if (!normalize_causal_rows(scores, L, softmax, 1.0, weights, error)) return fail(error);
        for (int i = L - 64; i < L; ++i)  // the zoomed window below: its largest weight
            for (int j = L - 64; j <= i; ++j) map_max = std::max(map_max, static_cast<double>(weights[static_cast<size_t>(i) * L + j]));
    } else {
        HeadMapWork map;
        HeadMapRequest r;
        r.pass = s.forward;
        r.layer = r.head = 0;
        r.normalizer = "softmax";
        r.max_blocks = 512;
        const struct {
            MapWindow window;
            BlockAggregation how;
        } views[] = {
            {{0, L, 0, L}, BlockAggregation::Max}, {{0, L, 0, L}, BlockAggregation::Sum}, {{L - 64, L, L - 64, L}, BlockAggregation::Max}};
        for (const auto& view : views) {
            r.window = view.window;
            r.how = view.how;
            keep_head_map(map, s, r);
            while (map.computing()) {
                if (TaskRunner::threaded()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
                pump_head_map(map, s);
            }
            if (!map.done || !same_request(map.done->request, r)) return fail("the attention map was not computed");
            if (!map.done->error.empty()) return fail(map.done->error);
            map_max = map.done->blocks.max;  // the last: the zoomed window's largest weight
        }
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf(
        "{\"tokens\":%d,\"peak_rss_bytes\":%.0f,\"capture_bytes\":%zu,\"perplexity\":%.17g,\"summaries_seconds\":%.3f,\"map_max\":%.9g}\n",
        n, static_cast<double>(usage.ru_maxrss) * 1024.0, s.forward->capture.bytes(), s.perplexities.front()->perplexity,
        s.summaries->seconds, map_max);
    return 0;
}
