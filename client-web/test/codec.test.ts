// The client codec against fixtures the server's own encoder wrote
// (scripts/make_fixtures.py → test/fixtures/{server,client}/*.msgpack + *.json).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CodecError, decodeServer, encodeClient } from "../src/codec";
import type { ClientMessage } from "../src/protocol";
import { CLIENT_TYPES, SERVER_TYPES } from "../src/protocol";
import { encode } from "@msgpack/msgpack";

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, "fixtures");

function load(direction: "server" | "client"): { name: string; frame: Uint8Array; meaning: Record<string, unknown> }[] {
  const folder = join(fixtures, direction);
  return readdirSync(folder)
    .filter((f) => f.endsWith(".msgpack"))
    .sort()
    .map((f) => {
      const name = f.replace(/\.msgpack$/, "");
      return {
        name,
        frame: new Uint8Array(readFileSync(join(folder, f))),
        meaning: JSON.parse(readFileSync(join(folder, `${name}.json`), "utf-8")) as Record<string, unknown>,
      };
    });
}

const serverFixtures = load("server");
const clientFixtures = load("client");

describe("server → client: the client decodes what the server encodes", () => {
  it("has fixtures for every server message type", () => {
    const types = new Set(serverFixtures.map((f) => f.meaning.type));
    expect([...types].sort()).toEqual([...SERVER_TYPES].sort());
  });
  for (const { name, frame, meaning } of serverFixtures) {
    it(`decodes ${name}`, () => {
      expect(decodeServer(frame)).toEqual(meaning);
    });
  }
  it("fills in the fields the server leaves out at their default", () => {
    const minimal = serverFixtures.find((f) => f.name === "joined_minimal")!;
    const decoded = decodeServer(minimal.frame);
    expect(decoded.type).toBe("joined");
    if (decoded.type === "joined") {
      expect(decoded.resumed).toBe(false);
      expect(decoded.snapshot.seat).toBeNull();
    }
  });
});

describe("client → server: the client encodes byte for byte what the server expects", () => {
  it("has fixtures for every client message type", () => {
    const types = new Set(clientFixtures.map((f) => f.meaning.type));
    expect([...types].sort()).toEqual([...CLIENT_TYPES].sort());
  });
  for (const { name, frame, meaning } of clientFixtures) {
    it(`encodes ${name} as msgspec does`, () => {
      const bytes = encodeClient(meaning as unknown as ClientMessage);
      expect(Buffer.from(bytes).toString("hex")).toBe(Buffer.from(frame).toString("hex"));
    });
  }
  it("leaves out undefined and null optional fields", () => {
    const bytes = encodeClient({ type: "join", table: "baccarat", role: undefined, ref: undefined });
    const expected = clientFixtures.find((f) => f.name === "join")!;
    expect(Buffer.from(bytes)).toEqual(Buffer.from(expected.frame));
  });
});

describe("bad frames", () => {
  it("refuses an unknown type", () => {
    expect(() => decodeServer(encode({ type: "surprise" }))).toThrow(CodecError);
  });
  it("refuses a missing required field", () => {
    expect(() => decodeServer(encode({ type: "balance", balance: 5 }))).toThrow(/reason/);
  });
  it("refuses a frame that is not a map", () => {
    expect(() => decodeServer(encode([1, 2, 3]))).toThrow(CodecError);
  });
  it("refuses bytes that are not MessagePack", () => {
    expect(() => decodeServer(new Uint8Array([0xc1]))).toThrow(CodecError);
  });
});
