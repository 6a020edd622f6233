import { defineConfig } from "vite";

// The server (`croupier serve`) serves dist/ on the same port as /ws; `npm run dev` proxies
// /ws to a server on 127.0.0.1:8000 so the client can be developed with hot reload.
export default defineConfig({
  base: "/",
  build: { outDir: "dist", emptyOutDir: true, assetsInlineLimit: 0, sourcemap: false },
  server: { proxy: { "/ws": { target: "ws://127.0.0.1:8000", ws: true } } },
});
