// Chrome's sampling profiler (CDP Profiler.stop's profile) read as self time by function, for the
// page benchmarks' --profile (bench/page_load.mjs, bench/page_speed.mjs).

// Self milliseconds by function ("name file", wasm functions included; "(idle)", "(program)" and
// "(garbage collector)" as Chrome names them), one Map a phase: phaseOf(ms since the profile's
// start) gives a sample's phase, 0 when every sample counts in one.
export function selfTimes(p, phaseOf = () => 0) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const name = (n) => {
    const f = n.callFrame;
    if (!f.url && ["(idle)", "(program)", "(garbage collector)"].includes(f.functionName)) return f.functionName;
    const file = f.url ? f.url.replace(/^.*\//, "").replace(/\?.*$/, "") : "native";
    return f.functionName ? `${f.functionName} ${file}` : `(anonymous) ${file}:${f.columnNumber}`;  // the column finds it in minified glue
  };
  const phases = [];
  let t = 0;  // ms since the profile's start
  for (let i = 0; i < p.samples.length; ++i) {
    t += p.timeDeltas[i] / 1000;
    const self = (phases[phaseOf(t)] ??= new Map());
    const label = name(byId.get(p.samples[i]));
    self.set(label, (self.get(label) ?? 0) + (p.timeDeltas[i + 1] ?? 0) / 1000);
  }
  return phases;
}

export const totalMs = (self) => [...self.values()].reduce((a, b) => a + b, 0);

// The `count` functions with the most self time, as "name file 123" joined by "; ".
export const topFunctions = (self, count) =>
  [...self].sort((a, b) => b[1] - a[1]).slice(0, count).map(([k, v]) => `${k} ${v.toFixed(0)}`).join("; ");
