// End to end with the operator's wallet: `croupier serve --wallet-demo` (the reference
// operator wallet started beside it, playing the operator's platform too) and headless
// Chromium. A player opens the game from the platform's page, plays a round of roulette with
// the operator's money, and the platform's page shows the balance the round left; a page
// opened without the platform says how to sign in. Screenshots go to docs/screenshots/.

import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceOf, CroupierServer, DESKTOP, launchBrowser, newPlayer, parseMoney, screenshot, waitForBetting, whenSettled } from "./harness";

let server: CroupierServer;
let browser: Browser;
let platform = "";
const externalRequests: string[] = [];

beforeAll(async () => {
  server = new CroupierServer(null, ["--wallet-demo"]);
  await server.start();
  // Printed once the platform knows where the game is served.
  const printed = /operator's platform[^:]*: (http:\/\/\S+?)\/?\s/;
  for (let waited = 0; !server.printed(printed); waited += 100) {
    if (waited > 20_000) throw new Error(`no platform URL printed:\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  platform = server.printed(printed)!;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  server?.cleanup();
  expect(externalRequests, "requests that left the test's services").toEqual([]);
});

async function player(): Promise<Page> {
  const { page, external } = await newPlayer(browser, server, DESKTOP, { allow: [`${platform}/`] });
  page.on("close", () => externalRequests.push(...external));
  return page;
}

/** A player's balance as the platform's page shows it ("1,000.00 USD" → 100000). */
async function atOperator(page: Page, who: string): Promise<number> {
  await page.goto(`${platform}/`);
  const row = page.locator("tr", { hasText: `Play as ${who}` });
  return parseMoney("$" + ((await row.locator("td.n").textContent()) ?? "").replace(" USD", ""));
}

describe("the browser client with the operator's wallet", () => {
  it("a player launched from the operator's platform plays with the operator's money", async () => {
    const page = await player();
    const opening = await atOperator(page, "alice");
    await screenshot(page, "wallet-demo-platform");
    await page.getByText("Play as alice").click();
    // The game, signed in with the platform's token; the token gone from the address bar.
    await page.waitForURL(`${server.url}/`);
    await expect.poll(() => balanceOf(page)).toBe(opening);
    expect(page.url()).not.toContain("token");
    expect(await page.locator(".who").textContent()).toBe("Alice");
    expect(await page.locator(".play-money").isHidden()).toBe(true);
    await page.getByTestId("play-roulette-double").click();
    await page.waitForSelector(".table-view[data-game]");
    await waitForBetting(page);
    const settling = whenSettled(page, { bets: 1, count: ['[data-testid="ball-result"].landed'] }, 60_000);
    await page.getByTestId("chip-100").click();
    await page.getByTestId("spot-red").click();
    await expect.poll(() => balanceOf(page)).toBe(opening - 100);
    await screenshot(page, "wallet-demo-table");
    const settled = await settling;
    const returned = 100 + parseMoney(settled.outcomes[0].replace(/^[A-Za-z ]+/, ""));
    await expect.poll(() => balanceOf(page)).toBe(opening - 100 + returned);
    // The operator's books: the stake debited, the round's returns credited there.
    await expect.poll(() => atOperator(page, "alice"), { timeout: 15_000 }).toBe(opening - 100 + returned);
    await page.close();
  }, 120_000);

  it("a page opened without the platform's token is told to sign in at the casino", async () => {
    const page = await player();
    await page.goto(`${server.url}/`);
    await expect.poll(() => page.getByTestId("lobby-status").textContent()).toMatch(/^Sign in at your casino to play/);
    expect(await page.getByTestId("connection").textContent()).toBe("Not signed in");
    await screenshot(page, "wallet-demo-signed-out");
    await page.close();
  });
});
