import { defineConfig } from "vitest/config";

// The end-to-end suite: a real `croupier serve` and headless Debian Chromium (e2e/).
export default defineConfig({
  test: {
    include: ["e2e/**/*.e2e.ts"],
    environment: "node",
    testTimeout: 120_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    // A poll waits for what the server does next (a bet acknowledged once it is durable, a
    // round's result): 1 s, Vitest's default, is too short on a loaded 2-core machine
    // running the test suite's parallel workers. A wait, not a timing assertion.
    expect: { poll: { timeout: 10_000 } },
  },
});
