// The pages of the client, from the URL's path: the lobby (/), a table (/table/ID), a player
// station's touchscreen (/station/ID, token in the fragment) and the big screen above a table
// (/display/ID).

export type Route =
  | { kind: "lobby" }
  | { kind: "table"; table: string }
  | { kind: "station"; station: string }
  | { kind: "display"; table: string };

function decode(part: string): string | null {
  try {
    const text = decodeURIComponent(part);
    return text ? text : null;
  } catch {
    return null;
  }
}

export function parseRoute(pathname: string): Route {
  const m = /^\/(table|station|display)\/([^/]+)\/?$/.exec(pathname);
  const id = m ? decode(m[2]) : null;
  if (!m || id === null) return { kind: "lobby" };
  if (m[1] === "station") return { kind: "station", station: id };
  if (m[1] === "display") return { kind: "display", table: id };
  return { kind: "table", table: id };
}
