#!/usr/bin/env python3
"""Stage 3 of both twins (tools/train_tiny/README.md, "Stage 3"): a grid of train_tiny.py runs side by side on
one GPU, each starting from a shipped stage-2 model. A short calibration under the same load sizes each run's
steps to a time budget; then the runs train, and their checkpoints are packed, in float16 and without the
optimizer (what --export needs), into $OUT with every log. Developer-time only, on a machine with a GPU.

Before, on a machine with `bible` and the attnlab CLI (the GPU machine has neither):
    train_tiny.py --attnlab build/native/attnlab --tokens build/train_tiny/kjv_tokens.npz ...  # writes the cache
    for m in tiny tiny-ssmax; do mkdir -p build/stage3/init/$m; cp assets/$m/*.json assets/$m/*.safetensors build/stage3/init/$m; done
On the GPU machine, from the repository's root (environment: OUT, TOKENS, BUDGET and DEADLINE in seconds,
SMAX, ONLY=run,run):
    OUT=DIR BUDGET=205 DEADLINE=275 ONLY=tiny-A,twin-A,twinL-A python3 tools/train_tiny/stage3_grid.py
Then, here, train_tiny.py --export with a run's options (its args.txt) and --checkpoint the unpacked NAME.pt.
"""
import math
import os
import re
import subprocess
import sys
import tarfile
import time

OUT = os.environ.get("OUT", "/tmp/out")
BUDGET = float(os.environ.get("BUDGET", "320"))      # seconds of training wanted
DEADLINE = float(os.environ.get("DEADLINE", "410"))  # seconds after which runs are killed
SMAX = int(os.environ.get("SMAX", "30000"))
# For a dry run on a CPU: DEVICE=cpu CAL_A=2 CAL_B=4 EVAL=2 ROUND=2 ONLY=tiny-B,twin-A BUDGET=20
DEVICE, EVAL, ROUND = os.environ.get("DEVICE", "cuda"), os.environ.get("EVAL", "100"), int(os.environ.get("ROUND", "500"))
CAL_A, CAL_B = int(os.environ.get("CAL_A", "100")), int(os.environ.get("CAL_B", "500"))
PY = sys.executable
T = "tools/train_tiny/train_tiny.py"
TOKENS = os.environ.get("TOKENS", "build/train_tiny/kjv_tokens.npz")
COMMON = (f"--tokens {TOKENS} --device {DEVICE} --threads 1 --short-steps 0 --induction-context 256 "
          f"--eval-every {EVAL} --checkpoint-every 1000 --warmup 100 --skip-rate 0").split()
TINY = "--init-from build/stage3/init/tiny/model.safetensors".split()
TWIN = "--init-from build/stage3/init/tiny-ssmax/model.safetensors --attention ssmax --ssmax-fixed".split()
TWIN_LEARNED = "--init-from build/stage3/init/tiny-ssmax/model.safetensors --attention ssmax".split()
MIX = "--copy-rate 0.25 --random-rate 0.2 --induction-mix 8".split()
LIGHT = "--copy-rate 0.1 --random-rate 0.1 --induction-mix 4".split()
# name: (model options, recipe options, share of the calibrated steps)
RECIPES = {
    "A": (MIX + "--batch-tokens 8192 --lr 2e-3 --weight-decay 0.1".split(), 1.0),
    "B": (MIX + "--batch-tokens 8192 --lr 2e-3 --weight-decay 0.1".split(), 0.5),
    "C": (LIGHT + "--batch-tokens 8192 --lr 2e-3 --weight-decay 0.1".split(), 1.0),
    "D": (MIX + "--batch-tokens 8192 --lr 1e-3 --weight-decay 0".split(), 1.0),
}
RUNS = {f"{m}-{r}": (opts, rec, share) for m, opts in (("tiny", TINY), ("twin", TWIN))
        for r, (rec, share) in RECIPES.items()}
RUNS["twinL-A"] = (TWIN_LEARNED, RECIPES["A"][0], 1.0)
if os.environ.get("ONLY"):
    RUNS = {n: RUNS[n] for n in os.environ["ONLY"].split(",")}


def paths(d):
    return ["--out", f"{d}/model", "--report", f"{d}/report", "--checkpoint", f"{d}/checkpoint.pt",
            "--fixture", f"{d}/fixtures/tiny_logits.json"]


def launch(phase, steps_of, stop_of=None):
    procs = {}
    for name, (opts, rec, share) in RUNS.items():
        d = f"build/stage3/{phase}/{name}"
        os.makedirs(d, exist_ok=True)
        steps = steps_of(name)
        stop = stop_of(name) if stop_of else steps
        args = [PY, T] + paths(d) + COMMON + opts + rec + ["--steps", str(steps), "--stop-at", str(stop)]
        with open(f"{d}/args.txt", "w") as f:
            f.write(" ".join(args[1:]) + "\n")
        procs[name] = (subprocess.Popen(args, stdout=open(f"{d}/log.txt", "w"), stderr=subprocess.STDOUT), d)
    return procs


def wait(procs, deadline):
    t0 = time.time()
    while any(p.poll() is None for p, _ in procs.values()):
        if time.time() - t0 > deadline:
            for p, _ in procs.values():
                if p.poll() is None:
                    p.kill()
            print(f"killed at the {deadline:.0f} s deadline", flush=True)
            break
        time.sleep(2)
    return time.time() - t0


def log_rows(d):
    rows = []
    for line in open(f"{d}/log.txt", errors="replace"):
        m = re.match(r"step\s+(\d+)\s+lr \S+\s+t \d+\s+train (\S+)\s+val (\S+)\s+previous-token max (\S+) \(modern (\S+)\)"
                     r"\s+induction max (\S+)\s+\((\d+) s", line)
        if m:
            rows.append((int(m[1]), float(m[2]), float(m[3]), float(m[4]), float(m[5]), float(m[6]), float(m[7])))
    return rows


def tail(d, n=15):
    return "".join(open(f"{d}/log.txt", errors="replace").readlines()[-n:])


def calibrate():
    """Seconds a step for each run, with every run going at once: CAL_B steps of a long schedule, timed from
    step CAL_A (after warm-up). A run that fails here stops the grid within a minute, not at the deadline."""
    cal = launch("cal", lambda name: 100000, lambda name: CAL_B)
    wait(cal, 150)
    rate = {}
    for name, (p, d) in cal.items():
        by = {r[0]: r for r in log_rows(d)}
        if p.returncode != 0 or CAL_A not in by or CAL_B not in by:
            sys.exit(f"calibration of {name} failed (rc {p.returncode}):\n{tail(d, 40)}")
        rate[name] = (by[CAL_B][6] - by[CAL_A][6]) / (CAL_B - CAL_A)
        print(f"calibration {name}: {rate[name] * 1000:.1f} ms a step with {len(RUNS)} runs at once; "
              f"val at {CAL_B}: {by[CAL_B][2]:.4f}", flush=True)
    return cal, rate


def report_and_lighten(runs):
    """Prints each run's last evaluation; writes light.pt beside each checkpoint: float16 weights (s kept in
    float32: config.json prints it to 9 digits), no optimizer."""
    import torch
    print(f"{'run':9s} {'steps':>6s} {'val':>7s} {'ppl':>6s} {'prev':>6s} {'modern':>6s} {'induct':>6s}  best val (step)")
    for name, (p, d) in runs.items():
        rows = log_rows(d)
        if rows:
            last, best = rows[-1], min(rows, key=lambda r: r[2])
            print(f"{name:9s} {last[0]:6d} {last[2]:7.4f} {math.exp(last[2]):6.1f} {last[3]:6.3f} {last[4]:6.3f} "
                  f"{last[5]:6.3f}  {best[2]:.4f} ({best[0]})  rc {p.returncode}", flush=True)
        else:
            print(f"{name}: no log rows, rc {p.returncode}\n{tail(d)}", flush=True)
        if os.path.exists(f"{d}/checkpoint.pt"):
            c = torch.load(f"{d}/checkpoint.pt", map_location="cpu")
            c.pop("opt", None)
            c["model"] = {k: (v if k.endswith("ssmax_s") or not v.is_floating_point() else v.half())
                          for k, v in c["model"].items()}
            torch.save(c, f"{d}/light.pt")


def pack(cal, runs):
    # Three runs a tar (~4.3 MB a checkpoint: the device tool brings back 8 files of 16 MiB), and every log.
    names = list(runs)
    for i in range(0, len(names), 3):
        with tarfile.open(f"{OUT}/ck{i // 3}.tar", "w") as tf:
            for name in names[i:i + 3]:
                if os.path.exists(f"{runs[name][1]}/light.pt"):
                    tf.add(f"{runs[name][1]}/light.pt", arcname=f"{name}.pt")
    with tarfile.open(f"{OUT}/logs.tar.gz", "w:gz") as tf:
        for phase, procs in (("cal", cal), ("run", runs)):
            for name, (_, d) in procs.items():
                for f in ("log.txt", "args.txt"):
                    tf.add(f"{d}/{f}", arcname=f"{phase}/{name}/{f}")


def main():
    os.makedirs(OUT, exist_ok=True)
    t_start = time.time()
    subprocess.run("nvidia-smi -L || true", shell=True)
    cal, rate = calibrate()
    print(f"calibration took {time.time() - t_start:.0f} s", flush=True)
    steps = {n: max(ROUND, min(SMAX, int(BUDGET * share / rate[n] / ROUND) * ROUND)) for n, (_, _, share) in RUNS.items()}
    print("steps:", steps, flush=True)
    runs = launch("run", lambda n: steps[n])
    print(f"training took {wait(runs, DEADLINE):.0f} s", flush=True)
    report_and_lighten(runs)
    pack(cal, runs)
    print(f"all done in {time.time() - t_start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
