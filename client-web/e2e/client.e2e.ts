// End to end: a real `croupier serve` and headless Chromium. Open the lobby (and see it say
// so while the server does not answer), play baccarat,
// roulette (a split and a Five Adjacent bet), Casino War (a War decision) and Down Under
// Blackjack (hit/stand), watch Big Six, and come back after the server drops the connection.
// Screenshots go to docs/screenshots/.

import type { Browser, Page, WebSocketRoute } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceOf, CroupierServer, DESKTOP, launchBrowser, newPlayer, parseMoney, PHONE, screenshot, waitForBetting, whenSettled } from "./harness";

let server: CroupierServer;
let browser: Browser;
const externalRequests: string[] = [];

beforeAll(async () => {
  server = new CroupierServer();
  await server.start();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  server?.cleanup();
  expect(externalRequests, "requests that left the test server").toEqual([]);
});

async function player(viewport = DESKTOP): Promise<Page> {
  const { page, external } = await newPlayer(browser, server, viewport);
  // Collected by reference: checked once at the end.
  page.on("close", () => externalRequests.push(...external));
  return page;
}

async function openTable(page: Page, table: string): Promise<void> {
  await page.goto(`${server.url}/`);
  await page.getByTestId(`play-${table}`).click();
  await page.waitForSelector(`.table-view[data-game]`);
}

const RESULT = '[data-testid="round-result"]';

function returnedFrom(outcomes: string[], stakes: number[]): number {
  // "Won +$4.75" / "Lost −$5" / "Push $0": returned = stake + net
  return outcomes.reduce((t, o, i) => t + stakes[i] + parseMoney(o.replace(/^[A-Za-z ]+/, "")), 0);
}

describe("the browser client against a real server", () => {
  it("shows the lobby: every table, its limits, players, countdown and results", async () => {
    const page = await player();
    await page.goto(`${server.url}/`);
    await page.waitForSelector('[data-table="roulette-single"]');
    await expect.poll(() => page.locator(".table-card").count()).toBe(13);
    await expect.poll(() => page.getByTestId("connection").textContent()).toMatch(/Connected · \d+ ms/);
    // let a round or two finish so the roads and result strips have something in them
    await page.waitForFunction(() => document.querySelectorAll('[data-table="baccarat"] .bead').length >= 2, null, { timeout: 20_000 });
    const card = page.locator('[data-table="baccarat"]');
    await expect.poll(() => card.textContent()).toMatch(/\$1 – \$5,000/);
    expect(await card.locator(".big-road .ring").count()).toBeGreaterThan(0);
    expect(await page.locator('[data-table="roulette-single"] .pocket').count()).toBeGreaterThan(0);
    await screenshot(page, "lobby");
    await page.setViewportSize(PHONE);
    await screenshot(page, "lobby-phone", false);
    await page.close();
  });

  it("says it is connecting until the server answers, and when it cannot reach it", async () => {
    const page = await player();
    // The page loads, but its WebSocket gets no answer until `answer`: each attempt is held.
    const held: WebSocketRoute[] = [];
    let answer = false;
    await page.routeWebSocket(/\/ws$/, (ws) => {
      if (answer) ws.connectToServer();
      else held.push(ws);
    });
    await page.goto(`${server.url}/`);
    const status = page.getByTestId("lobby-status");
    await expect.poll(() => status.textContent()).toMatch(/^Connecting to the table server…/);
    expect(await status.isVisible()).toBe(true);
    expect(await page.getByTestId("connection").textContent()).toBe("Connecting…");
    expect(await page.locator(".table-card").count()).toBe(0);
    await screenshot(page, "lobby-connecting", false);
    // The attempt fails: the lobby says the server cannot be reached, and that it retries.
    await held[0].close();
    await expect.poll(() => status.textContent()).toMatch(/^Cannot reach the table server(Retrying in \d s…|Retrying now…) 1 attempt has failed so far\./);
    expect(await page.locator(".lobby-notice.failed").isVisible()).toBe(true);
    expect(await page.getByTestId("connection").textContent()).toBe("Cannot connect · retrying");
    await expect.poll(() => held.length, { timeout: 10_000 }).toBe(2); // it did retry
    await screenshot(page, "lobby-unreachable", false);
    // The server answers the next attempt: the tables replace the notice.
    answer = true;
    await held[1].close();
    await page.waitForSelector('[data-table="baccarat"]', { timeout: 15_000 });
    await expect.poll(() => status.isVisible()).toBe(false);
    await expect.poll(() => page.getByTestId("connection").textContent()).toMatch(/Connected/);
    await page.close();
  });

  it("baccarat: bet on the Banker, see the cards, the settlement and the balance change", async () => {
    const page = await player();
    await openTable(page, "baccarat");
    const start = await balanceOf(page);
    const round = await waitForBetting(page);
    const settling = whenSettled(page, { bets: 2, count: [".hand-player .card", ".hand-banker .card"], text: [RESULT] });
    await page.getByTestId("chip-500").click();
    await page.getByTestId("spot-banker").click();
    await page.getByTestId("spot-perfect_pairs_player").click();
    await expect.poll(() => balanceOf(page)).toBe(start - 1000);
    await expect.poll(() => page.getByTestId("my-bets").textContent()).toMatch(/Banker\$5/);
    await screenshot(page, "baccarat-betting"); // chips on the layout, the countdown running
    const settled = await settling;
    expect(settled.counts[".hand-player .card"]).toBeGreaterThanOrEqual(2);
    expect(settled.counts[".hand-banker .card"]).toBeGreaterThanOrEqual(2);
    const returned = returnedFrom(settled.outcomes, [500, 500]);
    await expect.poll(() => balanceOf(page)).toBe(start - 1000 + returned);
    expect(settled.texts[RESULT]).toMatch(/(player|banker|tie) \d-\d — you (won|lost)|pushed/);
    expect(settled.round).toBe(round);
    await screenshot(page, "baccarat");
    // rules and paytable one click away, and the game recall
    await page.getByTestId("rules").click();
    await expect.poll(() => page.getByTestId("rules-dialog").textContent()).toMatch(/19 to 20/);
    await screenshot(page, "baccarat-rules");
    await page.keyboard.press("Escape");
    await page.getByTestId("recall").click();
    await expect.poll(() => page.getByTestId("recall-dialog").textContent()).toMatch(round);
    await screenshot(page, "baccarat-recall");
    await page.keyboard.press("Escape");
    await page.setViewportSize(PHONE);
    await screenshot(page, "baccarat-phone");
    await page.close();
  });

  it("roulette: a split and a Five Adjacent Numbers bet, the ball, the settlement", async () => {
    const page = await player();
    await openTable(page, "roulette-single");
    const start = await balanceOf(page);
    await waitForBetting(page);
    const settling = whenSettled(page, { bets: 2, count: ['[data-testid="ball-result"].landed'] });
    await page.getByTestId("chip-100").click();
    await page.getByTestId("spot-split:17-20").click();
    await page.getByTestId("track-17").click(); // 5 chips: 25, 17, 34, 6 and … around 17
    await expect.poll(() => balanceOf(page)).toBe(start - 600);
    const bets = await page.getByTestId("my-bets").textContent();
    expect(bets).toMatch(/Split 17\/20\$1/);
    expect(bets).toMatch(/Five Adjacent around 17\$5/);
    const settled = await settling;
    expect(settled.counts['[data-testid="ball-result"].landed']).toBe(1);
    const returned = returnedFrom(settled.outcomes, [100, 500]);
    await expect.poll(() => balanceOf(page)).toBe(start - 600 + returned);
    await screenshot(page, "roulette");
    await page.setViewportSize(PHONE);
    await screenshot(page, "roulette-phone");
    await page.close();
  });

  it("Casino War: on a tie the player goes to War", async () => {
    // Six players (every box) bet each round until one of them ties the dealer.
    const pages = await Promise.all(Array.from({ length: 6 }, () => player()));
    for (const p of pages) await openTable(p, "casino-war");
    let warPage: Page | null = null;
    const rounds: (string | null)[] = pages.map(() => null);
    for (let attempt = 0; attempt < 20 && !warPage; attempt++) {
      await Promise.all(
        pages.map(async (p, i) => {
          rounds[i] = await waitForBetting(p, rounds[i]);
          await p.getByTestId("chip-100").click();
          await p.getByTestId("spot-initial").click();
        }),
      );
      // wait until every page has its settlement or a decision
      const results = await Promise.all(
        pages.map((p) =>
          p
            .waitForFunction(
              () => !document.querySelector<HTMLElement>('[data-testid="decision"]')!.hidden || document.querySelectorAll('[data-testid="my-bets"] [data-testid="outcome"]').length > 0,
              null,
              { timeout: 30_000, polling: 50 },
            )
            .then(async () => !(await p.getByTestId("decision").isHidden())),
        ),
      );
      const i = results.indexOf(true);
      if (i >= 0) warPage = pages[i];
    }
    expect(warPage, "no tie in 20 rounds of six boxes").not.toBeNull();
    const page = warPage!;
    await expect.poll(() => page.getByTestId("war-note").textContent()).toMatch(/tie/i);
    await expect.poll(() => page.getByTestId("decision-left").textContent()).toMatch(/\d+ s to decide/);
    await screenshot(page, "casino-war");
    const before = await balanceOf(page);
    const settling = whenSettled(page, { bets: 2 });
    await page.getByTestId("decide-war").click();
    // a War Wager equal to the Initial Wager is placed; the War deal settles both
    await page.waitForFunction(() => /War\$1/.test(document.querySelector('[data-testid="my-bets"]')!.textContent ?? ""), null, { timeout: 15_000 });
    const returned = returnedFrom((await settling).outcomes, [100, 100]);
    await expect.poll(() => balanceOf(page)).toBe(before - 100 + returned);
    await screenshot(page, "casino-war-settled");
    await Promise.all(pages.map((p) => p.close()));
  });

  it("Down Under Blackjack: the reader light, hit and stand", async () => {
    const page = await player();
    await openTable(page, "down-under");
    let round: string | null = null;
    let decided = false;
    for (let attempt = 0; attempt < 8 && !decided; attempt++) {
      round = await waitForBetting(page, round);
      const settling = whenSettled(page, { bets: 1, count: [".hand-dealer .card:not(.face-down)"] });
      await page.getByTestId("chip-100").click();
      await page.getByTestId("spot-bet").click();
      const got = await page
        .waitForFunction(
          () => {
            const d = document.querySelector<HTMLElement>('[data-testid="decision"]')!;
            return (!d.hidden && d.querySelector('[data-decision="hit"], [data-decision="stand"]')) || document.querySelectorAll('[data-testid="my-bets"] [data-testid="outcome"]').length > 0;
          },
          null,
          { timeout: 30_000, polling: 50 },
        )
        .then(() => page.locator('[data-testid="decision"] [data-decision="hit"]').count());
      if (!got) {
        // insurance asked, or a blackjack: answer and play the next round
        const noIns = page.locator('[data-decision="no_insurance"]');
        if (await noIns.count()) await noIns.click();
        continue;
      }
      await expect.poll(() => page.getByTestId("reader-light").textContent()).toMatch(/Reader: (blue|red|yellow)/);
      await expect.poll(() => page.getByTestId("decision-left").textContent()).toMatch(/\d+ s to decide/);
      await screenshot(page, "down-under");
      await page.getByTestId("decide-hit").click();
      // after a hit: either another decision (then stand) or the hand is over (bust / 21)
      await page.waitForFunction(
        () => {
          const d = document.querySelector<HTMLElement>('[data-testid="decision"]')!;
          return (!d.hidden && !d.querySelector("button:disabled")) || document.querySelectorAll('[data-testid="my-bets"] [data-testid="outcome"]').length > 0;
        },
        null,
        { timeout: 30_000, polling: 50 },
      );
      const stand = page.locator('[data-testid="decide-stand"]:not(:disabled)');
      if (await stand.count()) await stand.click();
      expect((await settling).counts[".hand-dealer .card:not(.face-down)"]).toBeGreaterThanOrEqual(2);
      decided = true;
    }
    expect(decided, "no hit/stand decision in 8 rounds").toBe(true);
    await screenshot(page, "down-under-settled");
    await page.setViewportSize(PHONE);
    await screenshot(page, "down-under-phone");
    await page.close();
  });

  it("Big Six and 21 Baccarat tables open and show their layouts", async () => {
    const page = await player();
    // a spectator watches: no chips, no bets
    await page.goto(`${server.url}/`);
    await page.getByTestId("watch-big-six").click();
    await page.waitForSelector('[data-testid="spot-joker"]');
    await expect.poll(() => page.locator(".role-note").textContent()).toMatch(/Watching/);
    expect(await page.locator(".chip-rack").isVisible()).toBe(false);
    await page.waitForSelector('[data-testid="wheel-result"].landed', { timeout: 20_000 });
    await screenshot(page, "big-six");
    await openTable(page, "21-baccarat");
    await page.waitForSelector('[data-testid="spot-bonus_player"]');
    await screenshot(page, "21-baccarat");
    await openTable(page, "roulette-double");
    await page.waitForSelector('[data-testid="spot-first_five"]');
    await screenshot(page, "roulette-double");
    await page.close();
  });

  it("reconnects and resumes after the server drops the connection", async () => {
    const page = await player();
    await openTable(page, "baccarat");
    await waitForBetting(page);
    await expect.poll(() => page.getByTestId("connection").textContent()).toMatch(/Connected/);
    const balance = await balanceOf(page);
    const name = await page.locator(".who").textContent();
    await server.stop();
    await expect.poll(() => page.getByTestId("connection").textContent(), { timeout: 10_000 }).toMatch(/Reconnecting/);
    expect(await page.getByTestId("phase").textContent()).toMatch(/Connection lost/);
    await screenshot(page, "reconnecting");
    await server.start(); // same port, same data directory: the same player comes back
    await expect.poll(() => page.getByTestId("connection").textContent(), { timeout: 20_000 }).toMatch(/Connected · \d+ ms/);
    expect(await page.locator(".who").textContent()).toBe(name);
    expect(await balanceOf(page)).toBe(balance);
    // and plays on at the same table — with the keyboard this time
    await waitForBetting(page);
    const settling = whenSettled(page, { bets: 1 });
    await page.keyboard.press("1"); // the first chip: $1
    await page.getByTestId("spot-player").focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => balanceOf(page)).toBe(balance - 100);
    await settling;
    await page.close();
  });
});
