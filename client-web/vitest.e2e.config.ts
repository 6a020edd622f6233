import { defineConfig } from "vitest/config";

// The end-to-end suite: a real `croupier serve` and headless Debian Chromium (e2e/).
export default defineConfig({
  test: {
    include: ["e2e/**/*.e2e.ts"],
    environment: "node",
    testTimeout: 120_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
