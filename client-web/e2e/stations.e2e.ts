// End to end: player stations at a fully automated Lucky Nines table (docs/electronic-tables.md)
// against a real `croupier serve`, with the real station agents (`croupier device simulate
// --role station`) and their touchscreens in headless Chromium (touch, 1080×1920 and 1920×1080).
//
// s1: a $50 bill, Banker and Lucky Nines bet by touch, the round settles, CASH OUT prints a
// ticket (a file from the simulated printer); s2: that ticket into its reader, worth exactly its
// amount there; `croupier wallet balance` and `croupier meters --json` agree to the cent. s3:
// its main door opens (the lock overlay), closes, and the attendant turns the key (the menu with
// the meters and the locks) and clears the lock. The main display watches it all: roads and
// last winners. Screenshots go to docs/screenshots/ (or $SCREENSHOTS_DIR).

import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { croupier, CroupierServer, launchBrowser, newPlayer, parseMoney, screenshot, StationAgent, whenSettled, type Settled } from "./harness";

const PORTRAIT = { width: 1080, height: 1920 }; // a portrait cabinet
const LANDSCAPE = { width: 1920, height: 1080 }; // a landscape cabinet, and the big screen

const KEYS: Record<string, string> = { s1: "", s2: "", s3: "" };
for (const id of Object.keys(KEYS)) KEYS[id] = randomBytes(16).toString("hex"); // 32 hex digits

/** Three stations (seats 1–3) at `lucky`, a fully automated Lucky Nines table on short windows. */
function stationsConfig(server: CroupierServer): string {
  const devices = Object.entries(KEYS)
    .map(([id, key], i) => `[[devices]]\nid = "${id}"\nrole = "station"\nkey = "${key}"\ntables = ["lucky"]\nseat = ${i + 1}\n`)
    .join("\n");
  return `[device_link]
host = "127.0.0.1"
port = ${server.devicePort}

[stations]
handpay_limit = 120000
ticket_limit = 1000000
ticket_expiry_days = 30
bills = [100, 500, 1000, 2000, 5000, 10000]

${devices}
[[tables]]
id = "lucky"
name = "Lucky Nines — fully automated table"
game = "baccarat"
seats = 3
betting_seconds = 6
pause_seconds = 2
minimum = 100
maximum = 500000
[tables.options]
automated = true
mystery_bonus = "A-$1"
[tables.options.side_wagers]
lucky_nines = "A"
heavenly_9_progressive = ""
`;
}

let server: CroupierServer;
let browser: Browser;
let display: Page;
const agents: StationAgent[] = [];
const externalRequests: string[] = [];
const ticketsDir = mkdtempSync(join(tmpdir(), "croupier-tickets-"));
// Shared with the main display's test: the touchscreens of s2 and s3 (both with credits).
const screens: Record<string, Page> = {};

beforeAll(async () => {
  server = new CroupierServer(stationsConfig);
  await server.start();
  browser = await launchBrowser();
  // The big screen above the table watches from the start: every round, every winner.
  display = await screenPage(LANDSCAPE, false);
  await display.goto(`${server.url}/display/lucky`);
  await display.waitForSelector('.display-view[data-game="baccarat"]');
});

afterAll(async () => {
  await browser?.close();
  await Promise.all(agents.map((a) => a.stop()));
  await server?.stop();
  server?.cleanup();
  rmSync(ticketsDir, { recursive: true, force: true });
  expect(externalRequests, "requests that left the test server").toEqual([]);
});

async function screenPage(viewport: { width: number; height: number }, hasTouch = true): Promise<Page> {
  const { page, external } = await newPlayer(browser, server, viewport, { hasTouch });
  page.on("close", () => externalRequests.push(...external));
  return page;
}

function agent(id: string, args: string[]): StationAgent {
  const a = new StationAgent(id, KEYS[id], server, ["--print-screen", ...args]);
  agents.push(a);
  return a;
}

/** The agent's touchscreen URL opened in a touch browser, as the cabinet's kiosk browser does. */
async function touchscreen(a: StationAgent, viewport: { width: number; height: number }): Promise<Page> {
  const path = await a.screen();
  expect(path).toMatch(new RegExp(`^/station/${a.id}#token=`));
  const page = await screenPage(viewport);
  await page.goto(`${server.url}${path}`);
  await page.waitForSelector('[data-testid="station"] .table-view[data-game="baccarat"]');
  return page;
}

async function credits(page: Page): Promise<number> {
  return parseMoney((await page.getByTestId("credits").textContent()) ?? "");
}

/** A betting window (after `afterRound`) with at least `leftMs` to go, the station able to bet. */
async function waitForBetting(page: Page, afterRound: string | null = null, leftMs = 2500, timeout = 30_000): Promise<string> {
  await page.waitForFunction(
    ([prev, left]) => {
      const root = document.querySelector<HTMLElement>(".table-view");
      return root?.dataset.phase === "betting" && root.dataset.round !== prev && root.dataset.canBet === "true" && Number(root.dataset.closesIn ?? "0") > left;
    },
    [afterRound, leftMs] as const,
    { timeout, polling: 50 },
  );
  return (await page.locator(".table-view").getAttribute("data-round")) ?? "";
}

const RESULT = '[data-testid="round-result"]';

function returnedFrom(outcomes: string[], stakes: number[]): number {
  return outcomes.reduce((t, o, i) => t + stakes[i] + parseMoney(o.replace(/^[A-Za-z ]+/, "")), 0);
}

interface StationReport {
  meters: Record<string, number | Record<string, number>>;
  credits: number;
  in_play: number;
  reconciles: boolean;
  locks: string[];
}

describe.concurrent("player stations at a fully automated Lucky Nines table", () => {
  it("s1 bets by touch and cashes out a ticket; s2 redeems it; the meters agree to the cent", async ({ expect }) => {
    const s1 = agent("s1", ["--bills", "5000", "--tickets-dir", ticketsDir]);
    const page = await touchscreen(s1, PORTRAIT);
    await expect.poll(() => page.getByTestId("credits").textContent(), { timeout: 15_000 }).toBe("$50.00");
    expect(await page.locator(".station-id").textContent()).toBe("Station s1 · Seat 1");

    // Banker $25 and Lucky Nines $5, by touch: a chip, a spot, the other chip, the other spot.
    const round = await waitForBetting(page);
    const settling = whenSettled(page, { bets: 2, text: [RESULT] });
    await page.getByTestId("chip-2500").tap();
    await page.getByTestId("spot-banker").tap();
    await page.getByTestId("chip-500").tap();
    await page.getByTestId("spot-lucky_nines").tap();
    await expect.poll(() => credits(page)).toBe(2000);
    const bets = await page.getByTestId("my-bets").textContent();
    expect(bets).toMatch(/^Banker\$25in playLucky Nines\$5in play$/);
    expect(await page.locator('[data-testid="spot-banker"].has-bet, [data-testid="spot-lucky_nines"].has-bet').count()).toBe(2);
    await screenshot(page, "station-portrait", false);
    await page.setViewportSize(LANDSCAPE);
    await screenshot(page, "station-landscape", false);
    await page.setViewportSize(PORTRAIT);

    // The round settles: the credits are what the two bets paid back.
    const settled = await settling;
    expect(settled.round).toBe(round);
    expect(settled.texts[RESULT]).toMatch(/(player|banker|tie)/i);
    const returned = returnedFrom(settled.outcomes, [2500, 500]);
    await expect.poll(() => credits(page)).toBe(2000 + returned);
    const cashed = 2000 + returned;

    // CASH OUT: the printer prints the ticket the screen shows.
    await expect.poll(() => page.getByTestId("cash-out").isEnabled()).toBe(true);
    await page.getByTestId("cash-out").tap();
    const ticketText = (await page.getByTestId("ticket-text").textContent({ timeout: 10_000 })) ?? "";
    const m = /^Ticket printed: (\$[\d,.]+), validation (\d{18}), expires /.exec(ticketText);
    expect(m, ticketText).not.toBeNull();
    const validation = m![2];
    const amount = parseMoney(m![1]);
    expect(amount).toBe(cashed);
    expect(parseMoney((await page.locator(".ticket-amount").textContent()) ?? "")).toBe(amount);
    await expect.poll(() => credits(page)).toBe(0);
    const file = join(ticketsDir, `${validation}.json`);
    await expect.poll(() => existsSync(file), { timeout: 10_000 }).toBe(true);
    const printed = JSON.parse(readFileSync(file, "utf-8")) as { validation: string; amount: number; expires_at: string };
    expect(printed.validation).toBe(validation);
    expect(printed.amount).toBe(amount);
    await page.getByTestId("ticket-ok").tap();
    await expect.poll(() => page.getByTestId("ticket").isHidden()).toBe(true);
    await expect.poll(() => page.getByTestId("last-ticket").textContent()).toMatch(new RegExp(`^Last ticket \\${m![1]}`));
    expect(await page.getByTestId("cash-out").isDisabled()).toBe(true); // nothing left to cash out

    // The ticket into s2's reader: held, stacked, credited — exactly its amount.
    const s2 = agent("s2", ["--ticket", `${validation}:${amount}`]);
    await s2.waitFor(new RegExp(`^s2: ticket ${validation} stacked for ${amount}$`));
    await s2.waitFor(new RegExp(`^s2: enabled, credits ${amount}, `));
    const s2Screen = await touchscreen(s2, LANDSCAPE);
    await expect.poll(() => credits(s2Screen)).toBe(amount);
    screens.s2 = s2Screen;
    const dataDir = server.dataDir;
    const b2 = await croupier(["wallet", "balance", "station:s2", "--data-dir", dataDir]);
    expect(b2.code, b2.stderr).toBe(0);
    expect(b2.stdout).toBe(`station:s2: ${amount}\nledger reconciles\n`);
    const b1 = await croupier(["wallet", "balance", "station:s1", "--data-dir", dataDir]);
    expect(b1.code, b1.stderr).toBe(0);
    expect(b1.stdout).toBe("station:s1: 0\nledger reconciles\n");

    // The meters, checked against the ledger.
    const run = await croupier(["meters", "s1", "s2", "--data-dir", dataDir, "--json"]);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const report = JSON.parse(run.stdout) as Record<string, StationReport>;
    expect(report.s1.reconciles).toBe(true);
    expect(report.s2.reconciles).toBe(true);
    expect(report.s1.credits).toBe(0);
    expect(report.s1.in_play).toBe(0);
    expect(report.s1.locks).toEqual([]);
    expect(report.s1.meters).toMatchObject({
      credits_in: 5000,
      bills_in: { "5000": 1 },
      bills_in_amount: 5000,
      wagered: 3000,
      won: returned,
      games_played: 1,
      games_won: returned > 3000 ? 1 : 0,
      credits_out: amount,
      tickets_out: 1,
      tickets_out_amount: amount,
      tickets_in: 0,
      tickets_in_amount: 0,
    });
    expect(report.s2.credits).toBe(amount);
    expect(report.s2.meters).toMatchObject({
      credits_in: amount,
      tickets_in: 1,
      tickets_in_amount: amount,
      credits_out: 0,
      wagered: 0,
      bills_in_amount: 0,
    });
    await page.close();
  });

  it("s3: the main door locks it; the attendant's key opens the menu and clears the lock", async ({ expect }) => {
    // On s3's timeline (seconds after it connected): a $20 bill at 1, the main door open at 2
    // and closed at 9, the attendant key turned by att-7 at 10 and turned back at 17.
    const s3 = agent("s3", ["--bills", "2000", "--door-open-at", "2", "--attendant", "att-7", "--key-at", "10", "--clear-after", "7"]);
    const page = await touchscreen(s3, PORTRAIT);
    await expect.poll(() => page.getByTestId("credits").textContent(), { timeout: 15_000 }).toBe("$20.00");
    expect(await page.locator(".station-id").textContent()).toBe("Station s3 · Seat 3");

    // The door opens: the lock overlay covers the table, and no bet can be placed.
    const overlay = page.getByTestId("lock-overlay");
    await expect.poll(() => overlay.isVisible(), { timeout: 15_000 }).toBe(true);
    await expect.poll(() => page.getByTestId("lock-reasons").textContent()).toBe("Main door open");
    expect(await overlay.locator(".lock-headline").textContent()).toBe("Station locked");
    expect(await page.locator(".table-view").getAttribute("data-can-bet")).toBe("false");
    expect(await page.getByTestId("cash-out").isDisabled()).toBe(true);
    await screenshot(page, "station-locked", false);

    // The door closes: the lock stays until an attendant clears it.
    await s3.waitFor(/^s3: door_open cleared$/);
    await s3.waitFor(/^s3: disabled, credits 2000, locks door_open$/, 5_000, s3.lines.indexOf("s3: door_open cleared") + 1);
    expect(await overlay.isVisible()).toBe(true);

    // The attendant key: the menu with the meters and the lock (its cause gone).
    const menu = page.getByTestId("attendant-menu");
    await expect.poll(() => menu.isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await page.locator("#attendant-title").textContent()).toBe("Attendant menu — att-7");
    const meters = page.getByTestId("attendant-meters");
    expect(await meters.locator('[data-meter="credits_in"] td').textContent()).toBe("$20.00");
    expect(await meters.locator('[data-meter="bills_in_amount"] td').textContent()).toBe("$20.00");
    const lock = page.getByTestId("attendant-locks").locator('[data-cause="door_open"]');
    expect(await lock.count()).toBe(1);
    expect(await lock.getAttribute("class")).toBe("gone");
    await screenshot(page, "station-attendant", false);

    const keyOn = s3.lines.indexOf("s3: attendant key on (att-7)");
    expect(keyOn).toBeGreaterThan(0);
    await page.getByTestId("attendant-clear").tap();
    await s3.waitFor(/^s3: enabled, credits 2000, locks -$/, 5_000, keyOn + 1);
    await expect.poll(() => page.locator(".attendant-message").textContent()).toMatch(/^Done: every lock whose cause is gone was cleared\./);
    await expect.poll(() => page.getByTestId("attendant-locks").count()).toBe(0);
    // The key turned back: the menu closes, the station is enabled and takes bets again.
    await expect.poll(() => menu.isHidden(), { timeout: 15_000 }).toBe(true);
    await expect.poll(() => overlay.isHidden()).toBe(true);
    await s3.waitFor(/^s3: attendant key off$/);
    await expect.poll(() => page.getByTestId("cash-out").isEnabled()).toBe(true);
    screens.s3 = page;
  });
});

describe("the main display above the table", () => {
  it("shows the cards, the result, the roads and the last winners by seat", async () => {
    const s2 = screens.s2;
    const s3 = screens.s3;
    expect(s2 && s3, "the stations' tests ran first").toBeTruthy();
    // Rounds have been played while the display watched: the roads have them.
    await expect.poll(() => display.locator(".display-roads .bead").count(), { timeout: 20_000 }).toBeGreaterThan(0);
    // s2 bets on the Player and s3 on the Banker in the same round (only a tie pays neither),
    // until the display has shown two rounds' winners and the roads hold five rounds: then it
    // shows that round's cards, its result and its winner.
    let r2: string | null = null;
    let r3: string | null = null;
    let won = 0;
    let last: Settled | null = null; // what the display showed when the last round settled
    for (let attempt = 0; attempt < 6 && !(won >= 2 && (await display.locator(".display-roads .bead").count()) >= 5); attempt++) {
      r2 = await waitForBetting(s2, r2, 3500);
      r3 = await waitForBetting(s3, r3, 1500); // the same window: s2 saw more than 3.5 s of it left
      expect(r3).toBe(r2);
      const settling = [whenSettled(s2, { bets: 1 }), whenSettled(s3, { bets: 1 })];
      const shown = whenSettled(display, { root: ".display-view", count: [".hand-player .card"], text: [RESULT] });
      await s2.getByTestId("chip-500").tap();
      await s2.getByTestId("spot-player").tap();
      await s3.getByTestId("chip-500").tap();
      await s3.getByTestId("spot-banker").tap();
      const [o2, o3] = (await Promise.all(settling)).map((s) => s.outcomes);
      last = await shown;
      const winner = [o2[0], o3[0]].findIndex((o) => o.startsWith("Won"));
      if (winner < 0) continue; // a tie
      const line = display.locator(`.winners-list li[data-round="${r2}"]`);
      await line.waitFor({ timeout: 5_000 });
      // s2 sits at seat 2, s3 at seat 3 (their [[devices]] seats)
      expect(await line.allTextContents()).toEqual([`Seat ${winner + 2} · ${winner === 0 ? "$5.00" : "$4.75"}`]);
      won += 1;
    }
    expect(won, "no seat won in six rounds").toBeGreaterThan(0);
    expect(await display.locator(".display-title").textContent()).toBe("Lucky Nines — fully automated table");
    expect(last!.counts[".hand-player .card"]).toBeGreaterThanOrEqual(2);
    expect(last!.texts[RESULT]).toMatch(/^(Player wins|Banker wins|Tie)/);
    expect(await display.locator(".display-roads .big-road .ring").count()).toBeGreaterThan(0);
    await screenshot(display, "display", false);
  });
});

describe("the lobby", () => {
  it("offers the stations' table to watch, not to play, and says why", async () => {
    const page = await screenPage({ width: 1280, height: 900 }, false);
    await page.goto(`${server.url}/`);
    const card = page.locator('[data-table="lucky"]');
    await card.waitFor();
    expect(await page.getByTestId("play-lucky").count()).toBe(0);
    expect(await page.getByTestId("stations-only-lucky").textContent()).toBe("Played at its player stations on the casino floor — you can watch.");
    await screenshot(page, "lobby-stations-only", false);
    await page.getByTestId("watch-lucky").click();
    await page.waitForSelector('.table-view[data-game="baccarat"]');
    await expect.poll(() => page.locator(".role-note").textContent()).toMatch(/Watching/);
    expect(await page.locator(".chip-rack").isVisible()).toBe(false);
    await page.close();
  });
});
