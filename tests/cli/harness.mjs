// What the CLI contract tests share: the binary under test (argv[2]), a tally of checks, and a
// runner that never throws (a crash shows up as a signal in the result).
import { spawnSync } from "node:child_process";

export const cli = process.argv[2];
let passed = 0, failed = 0;

export function check(ok, what, detail = "") {
  if (ok) { passed++; console.log(`  ok    ${what}`); }
  else { failed++; console.log(`  FAIL  ${what}${detail ? `: ${detail}` : ""}`); }
}

export function run(args, input) {
  const r = spawnSync(cli, args, { input, encoding: "utf8", maxBuffer: 1 << 28 });
  return { code: r.status, signal: r.signal, out: r.stdout ?? "", err: r.stderr ?? "", error: r.error };
}

// Prints the tally and exits 1 if any check failed.
export function finish(name) {
  console.log(`${name}: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
