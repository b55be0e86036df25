// attnlab_bench: how fast the GPT-2 engine runs, measured against a pure GEMM of the same
// FLOPs on the same machine in the same run (the ratio is the figure that matters; absolute
// times on shared machines are noisy). Not a test: it asserts nothing.
//
//   attnlab_bench [--quick]      prefill L = 128, 512, 1024; decode; tokenizer; peak memory
//   attnlab_bench --experiments  the paper's five experiments at its sweep sizes, L = 1024
//   attnlab_bench --kernel [--repeats R]
//                                the run-time choice of tile, and every kernel against Eigen on
//                                the forward pass's shapes, one thread, best of R (5); in wasm
//                                also this CPU's clock, for the SIMD128 peak (kernel_bench.cpp)
//   attnlab_bench --weight-types [--repeats R]
//                                SmolLM2-135M's linear maps with F32, BF16 and F16 weights, one
//                                thread, best of R (5): the last table of --kernel alone
//   attnlab_bench --prefill 128,512,1024 [--repeats R] [--chunk N]
//                                prefill times only, as one JSON line (bench/onnx/compare.mjs);
//                                with --chunk, fed N tokens a call, as the page's sliced pass does;
//                                --model smollm2-135m [--dtype bf16]: the Llama-family peer of
//                                issue 37 instead of GPT-2 small; --decode N: also ms a token
//   attnlab_bench --plans [--repeats R]
//                                prefill at L = 1024 with every head on sparsemax, entmax-1.5,
//                                ssmax:0.43 and sa-softmax, each against the softmax pass in the
//                                same run: rounds of the five in turn, best of R (3) and the median;
//                                then each normalizer alone on the pass's scores, per head
//   --tile NAME (before --threads) every product through that kind of tile (natively with
//                                AVX-512; tile_choice.h), instead of the measured pick
//   --threads N (last)           use N threads (natively also OMP_NUM_THREADS; in the pthreads
//                                wasm build the pool's size, at most the machine's cores)
//
// The checkpoint is GPT-2 small's shape (124M parameters) with random weights, written as a
// safetensors file in memory and loaded through the same reader as a real one.
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "analysis/experiments.h"
#include "base/json.h"
#include "base/parallel.h"
#include "base/random.h"
#include "base/safetensors.h"
#include "base/sha256.h"
#include "kernel_bench.h"
#include "model/attention_capture.h"
#include "model/gemm.h"
#include "model/gpt2.h"
#include "model/llama.h"
#include "model/normalize_rows.h"
#include "model/random_checkpoint.h"
#include "model/tile_choice.h"
#include "platform/whole_file.h"
#include "tokenizer/gpt2_tokenizer.h"

#ifdef __EMSCRIPTEN__
#include <emscripten/em_js.h>
#include <emscripten/heap.h>
#else
#include <sys/resource.h>
#endif

#ifdef __EMSCRIPTEN__
// The process's CPU time in ms under node, every thread's, as compare.mjs's onnxruntime-web child
// measures its own with process.cpuUsage() (clock() is wall time in Emscripten); wall time in a
// browser, which has no such clock.
EM_JS(double, process_cpu_ms, (), {
    if (typeof process != 'undefined' && process.cpuUsage) {
        const u = process.cpuUsage();
        return (u.user + u.system) / 1000;
    }
    return performance.now();
});
#endif

using namespace attnlab;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Seconds of the process's CPU time so far (prefill_cpu_ms: on a shared machine the figure that
// other jobs do not add to).
double cpu_now() {
#ifdef __EMSCRIPTEN__
    return process_cpu_ms() / 1e3;
#else
    return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
#endif
}

double peak_memory_mb() {
#ifdef __EMSCRIPTEN__
    return static_cast<double>(emscripten_get_heap_size()) / (1 << 20);  // the heap only grows
#else
    rusage r{};
    getrusage(RUSAGE_SELF, &r);
    return static_cast<double>(r.ru_maxrss) / 1024.0;
#endif
}

// FLOPs one prefill of L tokens needs: per layer 24 L C^2 for the four linear maps, and
// 2 L (L + 1) C for scores and weighted values over the causal triangle (query i sees i + 1
// keys), plus the last token's logits. Work the engine wastes (masked entries it computes
// anyway, layer norms, softmax) is not counted, so it shows up in the ratio against it.
double prefill_flops(const Gpt2Config& c, int L) {
    const double C = c.n_embd;
    return c.n_layer * (24.0 * L * C * C + 2.0 * L * (L + 1.0) * C) + 2.0 * C * c.vocab_size;
}

// Seconds a pure fp32 GEMM would take for `flops`: gemm(), the product the forward pass uses,
// timed on the model's own most common shape, (L x C) @ (C x 4C), and scaled to the FLOP count.
double gemm_seconds(int L, int C, double flops, int repeats) {
    const int N = 4 * C;
    std::vector<float> a(static_cast<size_t>(L) * C, 0.5f), b(static_cast<size_t>(C) * N, 0.25f), out(static_cast<size_t>(L) * N);
    double best = 1e30;
    for (int r = 0; r < repeats + 1; ++r) {  // +1: the first touches the memory
        const double t0 = now();
        gemm(L, N, C, a.data(), C, b.data(), N, false, out.data(), N);
        best = std::min(best, now() - t0);
    }
    if (out[0] == 12345.0f) std::printf(" ");  // keep the product alive
    return best * flops / (2.0 * L * C * N);
}

// The five experiments at the paper's sweep sizes on 1024 random tokens, timed one by one,
// beside the paper's own run times (Table 1: PyTorch on an Apple M1 Pro CPU). Random weights
// give near-uniform attention, for which the critical-N search would stop at a small N; the
// KS level is set so high (rejecting at any p below 1 - 1e-12) that it does not stop early and
// scans N = 1..64 at every L, the work the paper's N* ~ 0.06 L = 61 at L = 1024 implies.
int run_experiments_bench(const Gpt2Model& model, const std::vector<int>& tokens) {
    AttentionCapture capture;
    Gpt2State state(model);
    std::vector<float> logits;
    std::string error;
    double t0 = now();
    if (!state.forward(std::span<const int>(tokens).first(1024), logits, error, false, &capture)) {
        std::fprintf(stderr, "attnlab_bench: %s\n", error.c_str());
        return 1;
    }
    const double forward = now() - t0;
    ExperimentOptions options = paper_sweeps(1024);
    options.ks_level = 1.0 - 1e-12;
    options.critical_max_n = 64;
    const char* paper[] = {"24 min", "37 min", "17 h 4 min", "7 min", "1 min"};
    const char* sweep[] = {"N = 5, L = 32..1024 step 32", "L = 1024, N = 1, 5, 10, 20, 100", "L = 32..1024 step 32, N = 1..64 scanned",
                           "L = 1024, N = 1..64", "26 temperatures x 3 eps"};
    std::printf("\n| experiment | sweep | AttnLab (s) | paper (PyTorch, M1 Pro CPU) |\n|---|---|---|---|\n");
    std::printf("| forward pass with capture | L = 1024 | %.1f | |\n", forward);
    double total = forward;
    int i = 0;
    for (ExperimentKind kind : kAllExperiments) {
        ExperimentResult result;
        t0 = now();
        if (!run_experiment(kind, capture, options, result, error)) {
            std::fprintf(stderr, "attnlab_bench: %s: %s\n", experiment_name(kind), error.c_str());
            return 1;
        }
        const double dt = now() - t0;
        total += dt;
        std::printf("| %s | %s | %.1f | %s |\n", experiment_name(kind), sweep[i], dt, paper[i]);
        std::fflush(stdout);
        ++i;
    }
    std::printf("| all five | | %.1f | about 18 h |\n", total);
    return 0;
}

// Milliseconds a token when `n` tokens are fed one at a time after a 128-token prefill, best of
// `repeats` runs after one unmeasured one; negative with a message on failure.
double decode_ms(const DecoderModel& model, const std::vector<int>& tokens, int n, int repeats, std::string& error) {
    const std::unique_ptr<DecoderState> state = model.new_state();
    std::vector<float> logits;
    double best = 1e30;
    for (int r = 0; r < repeats + 1; ++r) {
        state->reset();
        if (!state->prefill(std::span<const int>(tokens).first(128), error)) return -1;
        const double s = now();
        for (int i = 0; i < n; ++i)
            if (!state->forward(std::span<const int>(tokens).subspan(static_cast<size_t>(128 + i), 1), logits, error)) return -1;
        if (r > 0) best = std::min(best, (now() - s) / n);
    }
    return best * 1e3;
}

// Prefill times at the given lengths, best of `repeats` after one unmeasured pass (which lets
// V8 tier the hot functions up), as one JSON line.
// With decode > 0 also "decode_ms": milliseconds a token for `decode` tokens fed one at a time
// after a 128-token prefill (the KV-cache path), best of `repeats`.
int run_prefill_json(const DecoderModel& model, const std::string& checkpoint_sha, const std::vector<int>& lengths, int repeats, int chunk,
                     int decode, const std::vector<int>& tokens) {
    std::string error;
    std::vector<float> logits;
    std::printf("{\"build\":\"%s\",\"threads\":%d,\"chunk\":%d,\"checkpoint_sha256\":\"%s\",\"prefill_ms\":{",
#ifdef __EMSCRIPTEN_PTHREADS__
                "wasm-mt",
#elif defined(__EMSCRIPTEN__)
                "wasm",
#else
                "native",
#endif
                max_threads(), chunk, checkpoint_sha.c_str());
    std::vector<double> best_cpu(lengths.size(), 1e30);
    for (size_t i = 0; i < lengths.size(); ++i) {
        const int L = lengths[i];
        if (L < 1 || L > static_cast<int>(tokens.size())) {
            std::fprintf(stderr, "attnlab_bench: --prefill lengths must be 1..%zu, not %d\n", tokens.size(), L);
            return 2;
        }
        // One state for every run at this length, reset between them: its scratch buffers are
        // then the unmeasured pass's, as onnxruntime's arena is its warm-up run's. (A fresh state
        // per run faulted its scratch pages in again inside the timed pass: 10 ms of a 128-token
        // pass on 2 threads in this VM, bench/RESULTS.md.)
        double best = 1e30;
        const std::unique_ptr<DecoderState> state = model.new_state();
        for (int r = 0; r < repeats + 1; ++r) {
            state->reset();
            const double s = now();
            const double cpu0 = cpu_now();
            const int step = chunk > 0 ? chunk : L;
            for (int at = 0; at < L; at += step) {
                // As the page feeds a pass: the logits only after the last chunk.
                const auto part =
                    std::span<const int>(tokens).subspan(static_cast<size_t>(at), static_cast<size_t>(std::min(step, L - at)));
                if (!(at + step >= L ? state->forward(part, logits, error) : state->prefill(part, error))) {
                    std::fprintf(stderr, "attnlab_bench: %s\n", error.c_str());
                    return 1;
                }
            }
            if (r > 0) {
                best = std::min(best, now() - s);
                best_cpu[i] = std::min(best_cpu[i], cpu_now() - cpu0);
            }
        }
        std::printf("%s\"%d\":%.1f", i ? "," : "", L, best * 1e3);
        std::fflush(stdout);
    }
    // The process's CPU time too: on a machine shared with other jobs, one thread's CPU seconds
    // move far less than its wall time does (bench/RESULTS.md, issue 37).
    std::printf("},\"prefill_cpu_ms\":{");
    for (size_t i = 0; i < lengths.size(); ++i) std::printf("%s\"%d\":%.1f", i ? "," : "", lengths[i], best_cpu[i] * 1e3);
    std::printf("}");
    if (decode > 0) {
        const double ms = decode_ms(model, tokens, decode, repeats, error);
        if (ms < 0) {
            std::fprintf(stderr, "attnlab_bench: %s\n", error.c_str());
            return 1;
        }
        std::printf(",\"decode_ms\":%.2f", ms);
    }
    std::printf("}\n");
    return 0;
}

// Milliseconds to normalize every row of `heads`' captured scores (T x T, causal) under `how`,
// best of `repeats`: softmax as the forward pass runs it (Eigen's vectorised exp), the others
// through normalize_row as it does.
double normalizer_ms(const std::vector<std::vector<float>>& heads, int T, const HeadPlan& how, int repeats) {
    std::vector<float> out(static_cast<size_t>(T) * T);
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        const double s = now();
        for (const std::vector<float>& S : heads)
            for (int i = 0; i < T; ++i) {
                const float* row = S.data() + static_cast<size_t>(i) * T;
                float* w = out.data() + static_cast<size_t>(i) * T;
                if (how.normalizer.kind == NormalizerKind::Softmax) {
                    Eigen::Map<const Eigen::ArrayXf> sv(row, i + 1);
                    Eigen::Map<Eigen::ArrayXf> pv(w, i + 1);
                    pv = ((sv - sv.maxCoeff()) * (1.0f / how.temperature)).exp();
                    pv *= 1.0f / pv.sum();
                } else {
                    normalize_row(how, row, i + 1, w);
                }
            }
        best = std::min(best, now() - s);
    }
    return best * 1e3 / static_cast<double>(heads.size());
}

// The normalizers alone on the scores of a default pass (three heads: layers 0, 5, 11), per head,
// and what that adds to a pass of every head, against the best softmax pass: short timed units,
// so that best-of holds on a loaded machine where whole passes are cut by the scheduler.
void normalizer_share(const Gpt2Model& model, const std::vector<int>& tokens, const char* const* specs, int plans, double pass_ms) {
    const Gpt2Config& c = model.config();
    AttentionCapture capture;
    Gpt2State state(model);
    std::vector<float> logits;
    std::string error;
    if (!state.forward(std::span<const int>(tokens).first(1024), logits, error, false, &capture)) return;
    std::vector<std::vector<float>> heads;
    for (int l : {0, c.n_layer / 2 - 1, c.n_layer - 1}) heads.push_back(capture.scores(l, l % c.n_head));
    std::printf("\nthe normalizer alone on a 1024 x 1024 head's causal scores (layers 0, %d, %d of this pass), best of 10:\n\n",
                c.n_layer / 2 - 1, c.n_layer - 1);
    std::printf("| plan | ms per head | added to a pass of %d heads | that pass / softmax's (%.0f ms) |\n|---|---|---|---|\n",
                c.n_layer * c.n_head, pass_ms);
    double softmax_ms = 0;
    for (int p = 0; p < plans; ++p) {
        AttentionPlan plan(1, 1);
        parse_attention_spec(specs[p], 1, 1, plan, error);
        const double ms = normalizer_ms(heads, 1024, plan.at(0, 0), 10);
        if (p == 0) softmax_ms = ms;
        const double added = (ms - softmax_ms) * c.n_layer * c.n_head;
        std::printf("| %s | %.2f | %.0f ms | %.3f |\n", p ? specs[p] : "softmax (default)", ms, added, (pass_ms + added) / pass_ms);
    }
}

// The cost of swapped heads (issue 26): prefill at L = 1024 under each plan, the plans taking
// turns in each round so that a drift of the machine's speed hits them alike.
int run_plans_bench(const Gpt2Model& model, const std::vector<int>& tokens, int repeats) {
    const char* const specs[] = {"", "all=sparsemax", "all=entmax-1.5", "all=ssmax:0.43", "all=sa-softmax"};
    constexpr int kPlans = 5;
    const Gpt2Config& c = model.config();
    std::vector<Gpt2State> states;
    std::string error;
    for (const char* spec : specs) {
        states.emplace_back(model);
        if (!parse_attention_spec(spec, c.n_layer, c.n_head, states.back().plan, error)) {
            std::fprintf(stderr, "attnlab_bench: %s\n", error.c_str());
            return 1;
        }
    }
    std::vector<std::vector<double>> seconds(kPlans);
    std::vector<float> logits;
    for (int r = 0; r < repeats + 1; ++r) {  // round 0 is not measured: it faults the scratch in
        for (int p = 0; p < kPlans; ++p) {
            states[static_cast<size_t>(p)].reset();
            const double s = now();
            if (!states[static_cast<size_t>(p)].forward(std::span<const int>(tokens).first(1024), logits, error)) {
                std::fprintf(stderr, "attnlab_bench: %s\n", error.c_str());
                return 1;
            }
            if (r > 0) seconds[static_cast<size_t>(p)].push_back(now() - s);
        }
    }
    auto best = [&](int p) { return *std::min_element(seconds[static_cast<size_t>(p)].begin(), seconds[static_cast<size_t>(p)].end()); };
    auto median = [&](int p) {
        std::vector<double> v = seconds[static_cast<size_t>(p)];
        std::sort(v.begin(), v.end());
        return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    };
    std::printf("prefill at L = 1024, %d threads, %d rounds of the five plans in turn\n\n", max_threads(), repeats);
    std::printf("| plan | best (ms) | median (ms) | best / softmax's best | median / softmax's median |\n|---|---|---|---|---|\n");
    for (int p = 0; p < kPlans; ++p)
        std::printf("| %s | %.0f | %.0f | %.3f | %.3f |\n", p ? specs[p] : "softmax (default)", best(p) * 1e3, median(p) * 1e3,
                    best(p) / best(0), median(p) / median(0));
    normalizer_share(model, tokens, specs, kPlans, best(0) * 1e3);
    return 0;
}

// The Llama-family peer model of issue 37 (bench/onnx/run.sh --model smollm2): SmolLM2-135M's
// shape with random weights, the bytes `attnlab random-checkpoint --arch llama` writes for the
// same options (the same seed, and --dtype), so that its SHA-256 matches the file onnxruntime runs.
int run_llama_prefill_json(const std::vector<int>& lengths, int repeats, int chunk, int decode, DType dtype) {
    LlamaConfig c;
    c.num_hidden_layers = 30;
    c.num_attention_heads = 9;
    c.num_key_value_heads = 3;
    c.hidden_size = 576;
    c.head_dim = 64;
    c.intermediate_size = 1536;
    c.vocab_size = 49152;
    c.max_position_embeddings = 8192;
    c.tie_word_embeddings = true;
    const std::vector<std::uint8_t> file = random_checkpoint(c, 1, dtype);  // BF16: kept 16-bit, as a BF16 file is
    SafetensorsReader reader;
    LlamaModel model;
    std::string error;
    if (!reader.open(file, "random-smollm2-135m.safetensors", error) || !model.load(reader, c, error)) {
        std::fprintf(stderr, "attnlab_bench: %s\n", error.c_str());
        return 1;
    }
    std::vector<int> tokens(static_cast<size_t>(std::max(*std::max_element(lengths.begin(), lengths.end()), 128 + decode)));
    SplitMix64 rng(2);
    for (int& t : tokens) t = static_cast<int>(rng.next() % static_cast<std::uint64_t>(c.vocab_size));
    return run_prefill_json(model, sha256_hex(file), lengths, repeats, chunk, decode, tokens);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 2 && !std::strcmp(argv[argc - 2], "--threads")) {
        set_max_threads(std::max(1, std::atoi(argv[argc - 1])));
        argc -= 2;
    }
    if (argc > 2 && !std::strcmp(argv[argc - 2], "--tile")) {
        if (!force_tile(argv[argc - 1])) {
            std::fprintf(stderr, "attnlab_bench: no tile called %s in this build\n", argv[argc - 1]);
            return 2;
        }
        argc -= 2;
    }
    const bool quick = argc > 1 && !std::strcmp(argv[1], "--quick");
    const bool experiments = argc > 1 && !std::strcmp(argv[1], "--experiments");
    const int repeats = quick ? 1 : 3;
    const bool kernel = argc > 1 && !std::strcmp(argv[1], "--kernel");
    const bool plans = argc > 1 && !std::strcmp(argv[1], "--plans");
    std::vector<int> prefill_lengths;
    int prefill_repeats = 3, prefill_chunk = 0, prefill_decode = 0;
    std::string prefill_model = "gpt2-small", prefill_dtype = "f32";
    if (argc > 2 && !std::strcmp(argv[1], "--prefill")) {
        for (const char* p = argv[2]; *p;) {
            char* end = nullptr;
            prefill_lengths.push_back(static_cast<int>(std::strtol(p, &end, 10)));
            if (end == p) {
                std::fprintf(stderr, "attnlab_bench: --prefill wants lengths like 128,512,1024, not %s\n", argv[2]);
                return 2;
            }
            p = *end == ',' ? end + 1 : end;
        }
        for (int i = 3; i + 1 < argc; i += 2) {
            if (!std::strcmp(argv[i], "--repeats")) prefill_repeats = std::max(1, std::atoi(argv[i + 1]));
            else if (!std::strcmp(argv[i], "--chunk")) prefill_chunk = std::max(0, std::atoi(argv[i + 1]));
            else if (!std::strcmp(argv[i], "--decode")) prefill_decode = std::max(0, std::atoi(argv[i + 1]));
            else if (!std::strcmp(argv[i], "--model")) prefill_model = argv[i + 1];
            else if (!std::strcmp(argv[i], "--dtype")) prefill_dtype = argv[i + 1];
            else {
                std::fprintf(stderr, "attnlab_bench: --prefill takes --repeats, --chunk, --decode, --model and --dtype, not %s\n", argv[i]);
                return 2;
            }
        }
        if (prefill_dtype != "f32" && (prefill_dtype != "bf16" || prefill_model != "smollm2-135m")) {
            std::fprintf(stderr, "attnlab_bench: --dtype is f32, or bf16 with --model smollm2-135m, not %s\n", prefill_dtype.c_str());
            return 2;
        }
        if (prefill_model != "gpt2-small" && prefill_model != "smollm2-135m") {
            std::fprintf(stderr, "attnlab_bench: --model is gpt2-small or smollm2-135m, not %s\n", prefill_model.c_str());
            return 2;
        }
    }
#ifdef __EMSCRIPTEN_PTHREADS__
    const char* build = "wasm (SIMD128, pthreads)";
#elif defined(__EMSCRIPTEN__)
    const char* build = "wasm (SIMD128), 1 thread";
#else
    const char* build = "native";
#endif
    if (prefill_lengths.empty())
        std::printf("# attnlab_bench: %s, %d thread(s), Eigen %d.%d.%d\n\n", build, max_threads(), EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
                    EIGEN_MINOR_VERSION);

    const int kernel_repeats = argc > 3 && !std::strcmp(argv[2], "--repeats") ? std::max(1, std::atoi(argv[3])) : 5;
    if (kernel) return run_kernel_bench(kernel_repeats);
    if (argc > 1 && !std::strcmp(argv[1], "--weight-types")) return run_weight_type_bench(kernel_repeats);

    if (prefill_model == "smollm2-135m")
        return run_llama_prefill_json(prefill_lengths, prefill_repeats, prefill_chunk, prefill_decode,
                                      prefill_dtype == "bf16" ? DType::BF16 : DType::F32);
    const Gpt2Config config;  // GPT-2 small
    double t0 = now();
    const std::vector<std::uint8_t> file = random_checkpoint(config);
    SafetensorsReader reader;
    Gpt2Model model;
    std::string error;
    if (!reader.open(file, "random-gpt2-small.safetensors", error) || !model.load(reader, &config, error)) {
        std::fprintf(stderr, "attnlab_bench: %s\n", error.c_str());
        return 1;
    }
    std::vector<int> tokens(1024);
    SplitMix64 rng(2);
    for (int& t : tokens) t = static_cast<int>(rng.next() % static_cast<std::uint64_t>(config.vocab_size));
    if (!prefill_lengths.empty())
        return run_prefill_json(model, sha256_hex(file), prefill_lengths, prefill_repeats, prefill_chunk, prefill_decode, tokens);
    if (plans) return run_plans_bench(model, tokens, argc > 3 && !std::strcmp(argv[2], "--repeats") ? std::max(1, std::atoi(argv[3])) : 3);
    std::printf("checkpoint: %.1fM parameters, %.0f MB, made and loaded in %.2f s\n\n", model.parameter_count() / 1e6, file.size() / 1e6,
                now() - t0);

    std::printf("| prefill L | time (ms) | GFLOP/s | pure GEMM, same FLOPs (ms) | ratio |\n|---|---|---|---|---|\n");
    if (experiments) return run_experiments_bench(model, tokens);
    for (int L : {128, 512, 1024}) {
        if (quick && L > 128) break;
        double best = 1e30;
        std::vector<float> logits;
        for (int r = 0; r < repeats; ++r) {
            Gpt2State state(model);
            const double s = now();
            if (!state.forward(std::span<const int>(tokens).first(static_cast<size_t>(L)), logits, error)) {
                std::fprintf(stderr, "attnlab_bench: %s\n", error.c_str());
                return 1;
            }
            best = std::min(best, now() - s);
        }
        const double flops = prefill_flops(config, L);
        const double gemm = gemm_seconds(L, config.n_embd, flops, repeats);
        std::printf("| %d | %.1f | %.1f | %.1f | %.2f |\n", L, best * 1e3, flops / best / 1e9, gemm * 1e3, best / gemm);
    }

    // Full attention capture at L = 1024: Q/K/V kept, matrices recomputed on demand.
    if (!quick) {
        AttentionCapture capture;
        Gpt2State state(model);
        std::vector<float> logits;
        const double before = peak_memory_mb();
        const double s = now();
        state.forward(std::span<const int>(tokens).first(1024), logits, error, false, &capture);
        const double dt = now() - s;
        const double kept = 3.0 * config.n_layer * 1024 * config.n_embd * 4 / 1e6;
        const double all_matrices = 1.0 * config.n_layer * config.n_head * 1024 * 1024 * 4 / 1e6;
        const double r0 = now();
        const std::vector<float> w = capture.weights(5, 1);
        std::printf(
            "\ncapture at L = 1024: prefill %.0f ms with the observer; Q/K/V kept: %.0f MB (all %d matrices would be %.0f MB);"
            " peak memory %.0f -> %.0f MB; one head's 1024 x 1024 weights recomputed in %.0f ms\n",
            dt * 1e3, kept, config.n_layer * config.n_head, all_matrices, before, peak_memory_mb(), (now() - r0) * 1e3);
        if (w.empty()) return 1;
    }

    // Decode: one token at a time after a 128-token prompt.
    {
        Gpt2State state(model);
        std::vector<float> logits;
        state.forward(std::span<const int>(tokens).first(128), logits, error);
        const int steps = quick ? 16 : 64;
        const double s = now();
        for (int i = 0; i < steps; ++i) state.forward(std::span<const int>(tokens).subspan(static_cast<size_t>(128 + i), 1), logits, error);
        const double dt = now() - s;
        std::printf("\ndecode after a 128-token prompt: %.1f tokens/s (%.1f ms/token)\n", steps / dt, dt / steps * 1e3);
    }

    // Tokenizer: 1 MB of text made by decoding random tokens.
    {
        Gpt2Tokenizer tok;
        const std::string dir = std::string(ATTNLAB_ASSETS_DIR) + "/gpt2";
        if (!tok.load(read_whole_file(dir + "/encoder.json"), read_whole_file(dir + "/vocab.bpe"), error)) {
            std::printf("\ntokenizer: skipped (%s)\n", error.c_str());
        } else {
            std::string text;
            SplitMix64 r(3);
            while (text.size() < (1u << 20)) text += tok.token_bytes(static_cast<int>(r.next() % 50000));
            const double s = now();
            const std::vector<int> ids = tok.encode(text);
            const double dt = now() - s;
            std::printf("\ntokenizer: %.2f MB encoded in %.3f s (%.1f MB/s, %zu tokens)\n", text.size() / 1e6, dt, text.size() / 1e6 / dt,
                        ids.size());
        }
    }
    std::printf("\npeak memory: %.0f MB (the checkpoint's bytes are %.0f MB of it)\n", peak_memory_mb(), file.size() / 1e6);
    return 0;
}
