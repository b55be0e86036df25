#!/usr/bin/env python3
"""AttnLab natively against onnxruntime (its CPU provider, MLAS) and PyTorch eager: prefill of GPT-2
small's shape with random weights, last-position logits, at several thread counts and lengths, the three
engines one after another at each thread count, in one run (issue 28; bench/RESULTS.md).

Runs on any Linux x86-64 machine with python3, g++ (C++20, OpenMP), Eigen 3.4's headers, and the Python
packages onnxruntime, torch and numpy. Needs no network, no CMake, no node, no ImGui or GLFW:

    python3 bench/native_peers.py [--eigen /usr/include/eigen3] [--threads 1,2,4,8,16]
                                  [--lengths 128,512,1024] [--repeats 3] [--work build/native_peers] [--each-tile]
                                  [--prebuilt build/native]   (use attnlab and attnlab_bench from there instead)

1. builds `attnlab` (the CLI) and `attnlab_bench` with g++ -O3 -march=native -fopenmp straight from src/;
2. writes a random checkpoint (`attnlab random-checkpoint`, seed 1) and exports it to ONNX with this
   machine's torch (bench/onnx/export_gpt2.py: a plain PyTorch GPT-2, opset 14);
3. checks the logits on 128 tokens: onnxruntime's and PyTorch's against AttnLab's, within 1e-3 of the
   largest; nothing is timed if they disagree;
4. prints AttnLab's run-time choice of tile on this CPU (`attnlab_bench --kernel`: what it timed, what it
   picked, every kind against Eigen);
5. at each thread count, times AttnLab (`attnlab_bench --prefill`, which reports the checkpoint's SHA-256:
   it must be the same weights), onnxruntime and PyTorch, each in its own process, best of --repeats
   after one unmeasured pass, and prints the table and the ratios (peer time / AttnLab time: above 1,
   AttnLab is faster). --each-tile adds AttnLab with every kind of tile forced, at 1 and at the most
   threads, to check the pick against the alternatives on this machine.
Not a test: it asserts nothing about time.
"""
import argparse
import concurrent.futures
import glob
import hashlib
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB = 50257


def token_ids(n):
    """The ids every engine runs (the same as bench/onnx/compare.mjs)."""
    ids, x = [], 2654435761
    for _ in range(n):
        x = (x * 1103515245 + 12345) % 2**32
        ids.append(x % VOCAB)
    return ids


def build(work, eigen):
    """g++ objects in parallel, then the two programs. Returns (cli, bench)."""
    flags = ["-std=c++20", "-O3", "-march=native", "-fopenmp", "-DNDEBUG", "-I" + os.path.join(ROOT, "src"), "-isystem", eigen,
             f'-DATTNLAB_ASSETS_DIR="{os.path.join(ROOT, "assets")}"']
    engine = [f for room in ("base", "tokenizer", "model", "analysis") for f in sorted(glob.glob(os.path.join(ROOT, "src", room, "*.cpp")))
              if not f.endswith("_simd128.cpp")]
    cli = sorted(glob.glob(os.path.join(ROOT, "src/main/cli/**/cli_*.cpp"), recursive=True)) + [os.path.join(ROOT, "src/platform/mapped_file.cpp")]
    bench = [os.path.join(ROOT, "bench", f) for f in ("attnlab_bench.cpp", "kernel_bench.cpp")]
    objects = os.path.join(work, "obj")
    os.makedirs(objects, exist_ok=True)

    def compile_one(source):
        obj = os.path.join(objects, os.path.relpath(source, ROOT).replace("/", "_") + ".o")
        if not os.path.exists(obj) or os.path.getmtime(obj) < os.path.getmtime(source):
            subprocess.run(["g++", *flags, "-c", source, "-o", obj], check=True)
        return obj

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        engine_o = list(pool.map(compile_one, engine))
        cli_o, bench_o = list(pool.map(compile_one, cli)), list(pool.map(compile_one, bench))
    programs = []
    for name, objs in (("attnlab", cli_o), ("attnlab_bench", bench_o)):
        out = os.path.join(work, name)
        subprocess.run(["g++", "-fopenmp", "-o", out, *objs, *engine_o], check=True)
        programs.append(out)
    return programs


def run_json(argv, env=None):
    """The last line of a program's output that is a JSON object."""
    r = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if r.returncode != 0:
        sys.exit(f"native_peers: {' '.join(argv)} failed ({r.returncode}): {r.stderr}")
    return json.loads([line for line in r.stdout.splitlines() if line.startswith("{")][-1])


def child(kind, threads, onnx, ckpt, lengths, repeats, logits_out):
    """One peer in this process, its thread count fixed: prints one JSON line."""
    ids = token_ids(1024)
    if kind == "onnxruntime":
        import numpy as np
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(onnx, options, providers=["CPUExecutionProvider"])
        version = ort.__version__
        run = lambda L: session.run(None, {"input_ids": np.array([ids[:L]], dtype=np.int64)})[0].reshape(-1)
    else:
        import torch
        sys.path.insert(0, os.path.join(ROOT, "bench", "onnx"))
        from export_gpt2 import Gpt2LastLogits, read_safetensors
        torch.set_num_threads(threads)
        with open(os.path.join(ckpt, "config.json")) as f:
            model = Gpt2LastLogits(read_safetensors(os.path.join(ckpt, "model.safetensors"), torch.float32), json.load(f)).eval()
        version = torch.__version__

        def run(L):
            with torch.inference_mode():
                return model(torch.tensor([ids[:L]], dtype=torch.int64)).reshape(-1).numpy()
    if logits_out:
        run(128).astype("<f4").tofile(logits_out)
    ms = {}
    for L in lengths:
        best = float("inf")
        for r in range(repeats + 1):
            t0 = time.perf_counter()
            run(L)
            if r > 0:
                best = min(best, time.perf_counter() - t0)
        ms[str(L)] = round(best * 1e3, 1)
    print(json.dumps({"build": kind, "version": version, "threads": threads, "prefill_ms": ms}))


def peer(kind, threads, args, lengths, repeats, logits_out=None):
    argv = [sys.executable, os.path.abspath(__file__), "--child", kind, "--onnx", args.onnx, "--ckpt", args.ckpt,
            "--threads", str(threads), "--lengths", ",".join(map(str, lengths)), "--repeats", str(repeats)]
    return run_json(argv + (["--logits-out", logits_out] if logits_out else []), {"OMP_NUM_THREADS": str(threads)})


def check_logits(args, cli):
    import numpy as np
    ids = token_ids(128)
    r = subprocess.run([cli, "logits", "--model", os.path.join(args.ckpt, "model.safetensors"), "--ids", ",".join(map(str, ids)), "--json"],
                       capture_output=True, text=True, check=True)
    ours = np.array(json.loads(r.stdout)["logits"], dtype=np.float64)
    ok = True
    for kind in ("onnxruntime", "torch"):
        out = os.path.join(args.work, f"{kind}.f32")
        peer(kind, 1, args, [1], 1, logits_out=out)
        theirs = np.fromfile(out, dtype="<f4").astype(np.float64)
        diff, scale = float(np.max(np.abs(ours - theirs))), float(np.max(np.abs(ours)))
        agree = theirs.shape == ours.shape and diff <= 1e-3 * scale
        ok &= agree
        print(f"logits at L = 128, AttnLab vs {kind}: max |difference| {diff:.2e} against max |logit| {scale:.2e}: "
              f"{'agree' if agree else 'DISAGREE'}")
    if not ok:
        sys.exit("native_peers: the logits disagree; nothing timed")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--eigen", default="/usr/include/eigen3", help="Eigen 3.4's include folder (the one holding Eigen/)")
    p.add_argument("--threads", default="1,2,4,8,16")
    p.add_argument("--lengths", default="128,512,1024")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--work", default=os.path.join(ROOT, "build", "native_peers"))
    p.add_argument("--each-tile", action="store_true")
    p.add_argument("--prebuilt", help="a folder with attnlab and attnlab_bench already built (e.g. build/native): no g++ step")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--onnx", help=argparse.SUPPRESS)
    p.add_argument("--ckpt", help=argparse.SUPPRESS)
    p.add_argument("--logits-out", help=argparse.SUPPRESS)
    args = p.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]
    if args.child:
        return child(args.child, int(args.threads), args.onnx, args.ckpt, lengths, args.repeats, args.logits_out)

    threads = [int(x) for x in args.threads.split(",")]
    os.makedirs(args.work, exist_ok=True)
    if args.prebuilt:
        cli, bench = (os.path.join(args.prebuilt, name) for name in ("attnlab", "attnlab_bench"))
    else:
        cli, bench = build(args.work, args.eigen)
    args.ckpt, args.onnx = os.path.join(args.work, "ckpt"), os.path.join(args.work, "gpt2.onnx")
    if not os.path.exists(os.path.join(args.ckpt, "model.safetensors")):
        os.makedirs(args.ckpt, exist_ok=True)
        subprocess.run([cli, "random-checkpoint", "--out", args.ckpt], check=True)
    if not os.path.exists(args.onnx):
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "onnx", "export_gpt2.py"), args.ckpt, args.onnx], check=True)
    with open(os.path.join(args.ckpt, "model.safetensors"), "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(f"# AttnLab vs onnxruntime and PyTorch, {time.strftime('%Y-%m-%d %H:%M')}\nmachine: {model}, {os.cpu_count()} CPUs; "
          f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    check_logits(args, cli)
    kernel = subprocess.run([bench, "--kernel"], capture_output=True, text=True, check=True).stdout
    print("\n" + kernel)

    def ours(t, tile=None):
        r = run_json([bench, "--prefill", ",".join(map(str, lengths)), "--repeats", str(args.repeats), *(["--tile", tile] if tile else []),
                      "--threads", str(t)], {"OMP_NUM_THREADS": str(t)})
        if r["checkpoint_sha256"] != sha:
            sys.exit("native_peers: attnlab_bench ran other weights than the checkpoint")
        return r["prefill_ms"]

    rows = []
    for t in threads:  # the three engines one after another at each thread count
        a, o, pt = ours(t), peer("onnxruntime", t, args, lengths, args.repeats), peer("torch", t, args, lengths, args.repeats)
        rows += [(t, L, a[str(L)], o["prefill_ms"][str(L)], pt["prefill_ms"][str(L)]) for L in lengths]
        print(f"{t} thread(s): " + ", ".join(f"L = {L}: AttnLab {a[str(L)]}, onnxruntime {o['prefill_ms'][str(L)]}, "
                                             f"PyTorch {pt['prefill_ms'][str(L)]} ms" for L in lengths), flush=True)
    print(f"\nonnxruntime {o['version']}, PyTorch {pt['version']}; prefill ms, best of {args.repeats}\n")
    print("| threads | L | AttnLab | onnxruntime | PyTorch eager | onnxruntime / AttnLab | PyTorch / AttnLab |\n|---|---|---|---|---|---|---|")
    for t, L, a, o, pt in rows:
        print(f"| {t} | {L} | {a} | {o} | {pt} | {o / a:.2f} | {pt / a:.2f} |")
    if args.each_tile:
        header = next(line for line in kernel.splitlines() if line.startswith("| class |"))
        tiles = [c.strip() for c in header.strip("|").split("|")[2:-1]]
        print(f"\nAttnLab with every kind of tile forced (prefill ms, best of {args.repeats}):\n")
        print("| threads | tile | " + " | ".join(f"L = {L}" for L in lengths) + " |\n|---|---|" + "---|" * len(lengths))
        for t in sorted({threads[0], threads[-1]}):
            for tile in tiles + [None]:
                ms = ours(t, tile)
                print(f"| {t} | {tile or 'the pick'} | " + " | ".join(str(ms[str(L)]) for L in lengths) + " |", flush=True)
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
