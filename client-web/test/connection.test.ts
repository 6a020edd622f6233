// What the lobby and the header say while the connection is not open (main.ts, lobby.ts).
import { describe, expect, it } from "vitest";
import { connectionNotice } from "../src/connection";

describe("connection notice", () => {
  it("says it is connecting before the first answer", () => {
    const n = connectionNotice("connecting", false, null, 0);
    expect(n?.title).toBe("Connecting to the table server…");
    expect(n?.failed).toBe(false);
  });

  it("says the server cannot be reached, when it retries and how often it tried", () => {
    const n = connectionNotice("reconnecting", false, 1400, 3);
    expect(n?.title).toBe("Cannot reach the table server");
    expect(n?.detail).toContain("Retrying in 2 s…");
    expect(n?.detail).toContain("3 attempts have failed so far.");
    expect(n?.failed).toBe(true);
    expect(connectionNotice("reconnecting", false, 0, 1)?.detail).toBe("Retrying now… 1 attempt has failed so far.");
  });

  it("tells a dropped connection from one that never worked", () => {
    expect(connectionNotice("reconnecting", true, 500, 1)?.title).toBe("Connection lost — reconnecting…");
  });

  it("says nothing once the connection is open", () => {
    expect(connectionNotice("open", true, null, 0)).toBeNull();
  });
});
