// The end-to-end harness: a real `croupier serve` (with short betting and decision windows,
// on a free port, with a temporary data directory) and Debian's headless Chromium driven by
// playwright-core — no browser download, no request leaves 127.0.0.1.

import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
export const CLIENT_DIR = resolve(here, "..");
export const REPO = resolve(CLIENT_DIR, "..");
// docs/screenshots/ unless SCREENSHOTS_DIR says otherwise (the pytest wrapper keeps the
// working tree clean by pointing it at a temporary directory).
export const SCREENSHOTS = process.env.SCREENSHOTS_DIR ? resolve(process.env.SCREENSHOTS_DIR) : resolve(REPO, "docs", "screenshots");
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const CROUPIER = process.env.CROUPIER ?? join(REPO, ".venv", "bin", "croupier");

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

/** The demo lobby with windows short enough for tests: every table of server/demo_tables.toml. */
export function fastConfig(): string {
  let text = readFileSync(join(REPO, "server", "demo_tables.toml"), "utf-8");
  text = text.replace(/^betting_seconds = \d+.*$/gm, "betting_seconds = 4\npause_seconds = 1.5");
  text = text.replace(/^decision_seconds = \d+.*$/gm, "decision_seconds = 8");
  return text;
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.unref();
    s.on("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/**
 * The server's tables.toml: its text, or a function of the server (for the ports it was given:
 * `devicePort` is a free port chosen before the config is written, for `[device_link]`).
 */
export type ConfigSource = string | ((server: CroupierServer) => string);

export class CroupierServer {
  port = 0;
  /** A free port for the config's `[device_link]`, chosen at the first start. */
  devicePort = 0;
  private proc: ChildProcess | null = null;
  readonly dir = mkdtempSync(join(tmpdir(), "croupier-e2e-"));
  private log: string[] = [];

  /** `config`: the tables.toml to serve (default: the demo lobby on short windows), or null
   * for none (`args` then chooses what is served: `--wallet-demo`); `args`: more options. */
  constructor(
    private config: ConfigSource | null = fastConfig,
    private args: string[] = [],
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The server's --data-dir (the ledger, the journal, stations.sqlite). */
  get dataDir(): string {
    return join(this.dir, "data");
  }

  /** HOST:PORT of the device link, for the simulators' --server. */
  get deviceServer(): string {
    return `127.0.0.1:${this.devicePort}`;
  }

  async start(): Promise<void> {
    if (!existsSync(CROUPIER)) throw new Error(`croupier not found at ${CROUPIER} (set CROUPIER, or run scripts/test first)`);
    if (!this.devicePort) this.devicePort = await freePort();
    const served: string[] = [];
    if (this.config !== null) {
      const config = join(this.dir, "tables.toml");
      writeFileSync(config, typeof this.config === "string" ? this.config : this.config(this));
      served.push("--config", config);
    }
    // The first start binds any free port and says which in --port-file; a restart keeps it.
    const portFile = join(this.dir, "port");
    rmSync(portFile, { force: true });
    const port = this.port ? ["--port", String(this.port)] : ["--port", "0", "--port-file", portFile];
    this.proc = spawn(CROUPIER, ["serve", ...served, ...port, "--data-dir", this.dataDir, ...this.args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.proc.stdout!.on("data", (d) => this.log.push(String(d)));
    this.proc.stderr!.on("data", (d) => this.log.push(String(d)));
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (this.proc.exitCode !== null) throw new Error(`croupier serve exited:\n${this.log.join("")}`);
      if (!this.port && existsSync(portFile)) this.port = Number(readFileSync(portFile, "utf-8"));
      if (!this.port) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      try {
        const r = await fetch(`${this.url}/readyz`);
        if (r.ok) return;
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`croupier serve not ready in 60 s:\n${this.log.join("")}`);
  }

  /** Stop the process (SIGTERM: open rounds are voided and their wagers returned). */
  async stop(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    const done = new Promise((r) => p.once("exit", r));
    p.kill("SIGTERM");
    const timer = setTimeout(() => p.kill("SIGKILL"), 10_000);
    await done;
    clearTimeout(timer);
    this.proc = null;
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  output(): string {
    return this.log.join("");
  }

  /** The first match of `pattern` in what the server printed (e.g. the platform's URL). */
  printed(pattern: RegExp): string | null {
    return pattern.exec(this.output())?.[1] ?? null;
  }
}

/** What a `croupier` command said, and its exit status. */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run a `croupier` command (e.g. `meters s1 --json --data-dir D`) to its end. */
export function croupier(args: string[], timeout = 30_000): Promise<CommandResult> {
  return new Promise((res, rej) => {
    execFile(CROUPIER, args, { timeout, encoding: "utf-8" }, (err, stdout, stderr) => {
      if (err && typeof err.code !== "number") return rej(new Error(`croupier ${args.join(" ")}: ${err.message}\n${stderr}`));
      res({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
  });
}

/**
 * A player station's agent: the real `croupier device simulate --role station` process,
 * connected to the server's device link, with its stdout kept line by line (`--print-screen`
 * prints the touchscreen's path and token; bills, tickets and state changes are logged).
 */
export class StationAgent {
  readonly lines: string[] = [];
  private proc: ChildProcess;
  private partial = "";
  private waiters: { pattern: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];

  /** `args`: the simulator's own options (--bills, --ticket, --door-open-at, …). */
  constructor(
    readonly id: string,
    key: string,
    server: CroupierServer,
    args: string[] = [],
  ) {
    if (!existsSync(CROUPIER)) throw new Error(`croupier not found at ${CROUPIER}`);
    const argv = ["device", "simulate", "--role", "station", "--device-id", id, "--server", server.deviceServer, "--key", key, ...args];
    this.proc = spawn(CROUPIER, argv, { stdio: ["ignore", "pipe", "pipe"] });
    this.proc.stdout!.on("data", (d) => this.take(String(d)));
    this.proc.stderr!.on("data", (d) => this.take(String(d)));
  }

  private take(chunk: string): void {
    const parts = (this.partial + chunk).split("\n");
    this.partial = parts.pop() ?? "";
    for (const line of parts) {
      this.lines.push(line);
      this.waiters = this.waiters.filter((w) => {
        const m = w.pattern.exec(line);
        if (m) w.resolve(m);
        return !m;
      });
    }
  }

  /** The first line from line `from` on (already printed or still to come) that matches `pattern`. */
  waitFor(pattern: RegExp, timeout = 15_000, from = 0): Promise<RegExpExecArray> {
    for (const line of this.lines.slice(from)) {
      const m = pattern.exec(line);
      if (m) return Promise.resolve(m);
    }
    return new Promise((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`station ${this.id}: no line matching ${pattern} in ${timeout} ms; it said:\n${this.output()}`)), timeout);
      this.waiters.push({
        pattern,
        resolve: (m) => {
          clearTimeout(timer);
          res(m);
        },
      });
    });
  }

  /** The touchscreen's path with its token (`/station/ID#token=…`), from `--print-screen`. */
  async screen(timeout = 15_000): Promise<string> {
    return (await this.waitFor(/^screen: (\/station\/\S+#token=\S+)$/, timeout))[1];
  }

  output(): string {
    return this.lines.join("\n") + (this.partial ? `\n${this.partial}` : "");
  }

  /** Interrupt the agent (its cabinet switched off: the server locks it for `connection`). */
  async stop(): Promise<void> {
    const p = this.proc;
    if (p.exitCode !== null || p.signalCode !== null) return;
    const done = new Promise((r) => p.once("exit", r));
    p.kill("SIGINT");
    const timer = setTimeout(() => p.kill("SIGKILL"), 5_000);
    await done;
    clearTimeout(timer);
  }
}

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
}

/**
 * A fresh browser context (its own storage: a new demo player) that refuses every request
 * not addressed to the test server, and records them so the test can assert there were none.
 */
export async function newPlayer(
  browser: Browser,
  server: CroupierServer,
  viewport = DESKTOP,
  options: { hasTouch?: boolean; allow?: string[] } = {},
): Promise<{ context: BrowserContext; page: Page; external: string[] }> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1, reducedMotion: "reduce", hasTouch: options.hasTouch ?? false });
  const external: string[] = [];
  // The test server, and the other local services a test names (an operator's platform).
  const allowed = [`http://127.0.0.1:${server.port}/`, ...(options.allow ?? []), "data:"];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (allowed.some((prefix) => url.startsWith(prefix))) return route.continue();
    external.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  return { context, page, external };
}

export async function screenshot(page: Page, name: string, fullPage = true): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage });
}

/** "$1,234.50" → 123450 minor units. */
export function parseMoney(text: string): number {
  const negative = /[−-]/.test(text);
  const m = /\$([\d,]+)(?:\.(\d{2}))?/.exec(text);
  if (!m) throw new Error(`not money: ${text}`);
  const minor = Number(m[1].replace(/,/g, "")) * 100 + Number(m[2] ?? 0);
  return negative ? -minor : minor;
}

export async function balanceOf(page: Page): Promise<number> {
  return parseMoney((await page.getByTestId("balance").textContent()) ?? "");
}

/** Wait for a betting window that opened after `afterRound` (or any open one). */
export async function waitForBetting(page: Page, afterRound: string | null = null, timeout = 30_000): Promise<string> {
  await page.waitForFunction(
    (prev) => {
      const root = document.querySelector<HTMLElement>(".table-view");
      const left = Number(root?.dataset.closesIn ?? "0");
      return root?.dataset.phase === "betting" && root.dataset.round !== prev && root.dataset.canBet === "true" && left > 1200;
    },
    afterRound,
    { timeout, polling: 50 },
  );
  return (await page.locator(".table-view").getAttribute("data-round")) ?? "";
}

/** What a screen showed the moment its round settled (see `whenSettled`). */
export interface Settled {
  round: string;
  /** The outcome of each of the player's bets ("Won +$4.75", "Lost −$5"). */
  outcomes: string[];
  /** How many elements each `count` selector matched. */
  counts: Record<string, number>;
  /** The text of the first element of each `text` selector ("" where none). */
  texts: Record<string, string>;
}

/**
 * Starts watching at once and resolves with what the screen showed when its round settled
 * (the `root` view's phase "settled", with at least `bets` outcomes in the player's list).
 * The next round's betting window clears the bets, the cards and the result after the
 * table's pause (two seconds on the test tables), and a loaded machine can take longer than
 * that over a screenshot: so call this before anything slow, and read the round's state
 * from what it returns, which the page itself captured while it was on screen.
 */
export function whenSettled(
  page: Page,
  { bets = 0, root = ".table-view", count = [] as string[], text = [] as string[] } = {},
  timeout = 30_000,
): Promise<Settled> {
  const watch = page
    .waitForFunction(
      ([n, rootSel, countSel, textSel]) => {
        const view = document.querySelector<HTMLElement>(rootSel);
        const outcomes = [...document.querySelectorAll('[data-testid="my-bets"] [data-testid="outcome"]')].map((e) => e.textContent ?? "");
        if (view?.dataset.phase !== "settled" || outcomes.length < n) return null;
        return {
          round: view.dataset.round ?? "",
          outcomes,
          counts: Object.fromEntries(countSel.map((s) => [s, document.querySelectorAll(s).length])),
          texts: Object.fromEntries(textSel.map((s) => [s, document.querySelector(s)?.textContent ?? ""])),
        };
      },
      [bets, root, count, text] as const,
      { timeout, polling: 50 },
    )
    .then((handle) => handle.jsonValue() as Promise<Settled>);
  // Awaited later by the caller; a rejection before then must not count as unhandled.
  watch.catch(() => undefined);
  return watch;
}
