import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { createServer, type Server, type Socket } from "node:net";
import {
  CONNECT_TIMEOUT_CODE,
  connectionDropped,
  neverSent,
} from "../../../../src/migrate/search/http/send_failure.ts";
import { runtimeTransport } from "../../../../src/migrate/search/http/transport.ts";
import { propertyOptions } from "../../../property.ts";
import { freePort, type Helper, startSilentServer } from "../servers.ts";

/**
 * What this runtime's fetch throws for `url`, given up after `ms`: 300 for the silent host, whose
 * silence must outlast it; the refused and the resetting host end it at once.
 */
async function fetchError(url: string, ms = 10_000): Promise<unknown> {
  try {
    await fetch(url, { method: "POST", body: "{}", signal: AbortSignal.timeout(ms) });
  } catch (error) {
    return error;
  }
  throw new Error(`${url} answered`);
}

describe("neverSent on real errors", () => {
  let silent: Helper;
  let resetting: Server;
  let resetUrl: string;
  before(async () => {
    silent = await startSilentServer();
    // Reads the request, then resets the connection: the request was sent.
    resetting = createServer((s: Socket) => {
      s.on("error", () => {});
      s.once("data", () => s.resetAndDestroy());
    });
    await new Promise<void>((r) => resetting.listen(0, "127.0.0.1", r));
    resetUrl = `http://127.0.0.1:${(resetting.address() as { port: number }).port}/`;
  });
  after(async () => {
    await silent.stop();
    await new Promise((r) => resetting.close(r));
  });

  describe("on this runtime's own fetch", () => {
    it("is true for a refused connection", async () => {
      assert.equal(neverSent(await fetchError(`http://127.0.0.1:${await freePort()}/`)), true);
    });

    it("is false for a host that took the request and went silent, or reset the connection", async () => {
      assert.equal(neverSent(await fetchError(silent.url, 300)), false);
      assert.equal(neverSent(await fetchError(resetUrl)), false);
    });
  });

  describe("on the errors of the transport the runner uses on this runtime", () => {
    // Node sends through node:http(s) unless a proxy is set; Deno and Bun through fetch, and
    // through node:http(s) with proxy: false. A body given as a stream is one sent only once.

    // Given up after `ms`: 300 for the silent host only, whose silence must outlast it.
    async function transportError(
      url: string,
      proxy: false | undefined,
      stream: boolean,
      ms = 10_000,
    ) {
      const transport = await runtimeTransport({
        sslVerification: true,
        proxy,
        connectTimeoutMs: 5000,
      });
      try {
        const body = stream ? new Blob(["{}"]).stream() : "{}";
        await transport.fetch(new URL(url), {
          method: "POST",
          body,
          duplex: "half",
          signal: AbortSignal.timeout(ms),
        } as RequestInit);
      } catch (error) {
        return error;
      } finally {
        transport.close();
      }
      throw new Error(`${url} answered`);
    }

    for (const proxy of [undefined, false] as const) {
      for (const stream of [false, true]) {
        it(`proxy: ${proxy}, ${stream ? "stream" : "text"} body: refused is never sent; silence and a reset are not`, async () => {
          const refused = await transportError(
            `http://127.0.0.1:${await freePort()}/`,
            proxy,
            stream,
          );
          assert.equal(neverSent(refused), true, String(refused));
          const silence = await transportError(silent.url, proxy, stream, 300);
          assert.equal(neverSent(silence), false, String(silence));
          const reset = await transportError(resetUrl, proxy, stream);
          assert.equal(neverSent(reset), false, String(reset));
          // A dropped connection, which the client tries once more on a connection of its own.
          assert.equal(connectionDropped(refused), false, String(refused));
          assert.equal(connectionDropped(silence), false, String(silence));
          assert.equal(connectionDropped(reset), true, String(reset));
        });
      }
    }
  });
});

const NOT_CONNECTED = ["ECONNREFUSED", "ENOTFOUND", CONNECT_TIMEOUT_CODE, "ConnectionRefused"];
const OTHER = ["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "ETIMEDOUT", "ABORT_ERR", "23"];

/** One error as a runtime nests them: a code, a message, a cause. */
interface ErrorNode {
  code?: string;
  message: string;
  cause?: ErrorNode;
}

/** Errors of random codes and messages, nested a few causes deep. */
function errorChains(codes: readonly string[], messages: readonly string[]) {
  return fc.letrec((tie) => ({
    node: fc.record({
      code: fc.option(fc.constantFrom(...codes), { nil: undefined }),
      message: fc.constantFrom(...messages),
      cause: fc.option(tie("node"), { nil: undefined, depthSize: "small" }),
    }),
  })).node as fc.Arbitrary<ErrorNode>;
}

/** The reference: whether `test` holds for the error or one of its first 4 causes. */
function withinFourCauses(e: ErrorNode, test: (node: ErrorNode) => boolean): boolean {
  let at: ErrorNode | undefined = e;
  for (let depth = 0; depth < 4 && at !== undefined; depth++, at = at.cause) {
    if (test(at)) return true;
  }
  return false;
}

describe("neverSent (property)", () => {
  it("is true exactly when a not-connected code or Deno's connect phase is within 4 causes", () => {
    const errors = errorChains(
      [...NOT_CONNECTED, ...OTHER],
      ["fetch failed", "client error (Connect): refused", "reset"],
    );
    fc.assert(
      fc.property(errors, (e) => {
        const expected = withinFourCauses(
          e,
          ({ code, message }) =>
            (code !== undefined && NOT_CONNECTED.includes(code)) || message.includes("(Connect)"),
        );
        assert.equal(neverSent(e), expected);
      }),
      propertyOptions(),
    );
  });

  it("connectionDropped: true exactly when a reset, broken pipe or closed socket code is within 4 causes", () => {
    const DROPPED = ["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "ECONNABORTED"];
    const errors = errorChains(
      [...NOT_CONNECTED, ...OTHER, "ECONNABORTED", "DEPTH_ZERO_SELF_SIGNED_CERT"],
      ["fetch failed", "socket hang up", "HTTP status 101 from the host"],
    );
    fc.assert(
      fc.property(errors, (e) => {
        const expected = withinFourCauses(
          e,
          ({ code }) => code !== undefined && DROPPED.includes(code),
        );
        assert.equal(connectionDropped(e), expected);
      }),
      propertyOptions(),
    );
  });

  it("ends on a cause that loops, and is false for what is not an error object", () => {
    const looping: { code: string; cause?: unknown } = { code: "ECONNRESET" };
    looping.cause = looping;
    assert.equal(neverSent(looping), false);
    for (const value of [undefined, null, "ECONNREFUSED", 42]) {
      assert.equal(neverSent(value), false);
    }
  });
});
