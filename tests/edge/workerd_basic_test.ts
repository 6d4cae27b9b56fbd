// HTTP Basic and API keys on real workerd: its Web Crypto derives the PBKDF2 hashes and the keys'
// digests. (Cloudflare's hosted Workers refuse PBKDF2 beyond 100,000 iterations; the open-source
// workerd does not, so OWASP's 600,000 is derived here: the cap cannot be tested locally.)
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type ServedWorker, serveWorker } from "./workerd.ts";

const WORKER = fileURLToPath(new URL("../fixtures/basic_worker.ts", import.meta.url));

describe("HTTP Basic and API keys on workerd", () => {
  let worker: ServedWorker;

  before(async () => {
    worker = await serveWorker(WORKER, "basic_worker", { readyPath: "/ready" });
  });

  after(async () => {
    await worker?.close();
  });

  const call = async (path: string, headers: Record<string, string>) => {
    const response = await fetch(`${worker.origin}${path}`, { headers });
    return { status: response.status, text: await response.text() };
  };

  it("lets in the right password and refuses the wrong ones with their reason", async () => {
    const basic = (text: string) => call("/basic", { authorization: `Basic ${btoa(text)}` });
    const ok = await basic("ada:s3cret");
    assert.equal(ok.status, 200, `${ok.text}\n${worker.output()}`);
    assert.deepEqual(JSON.parse(ok.text), {
      scheme: "basic",
      name: "ada",
      authorities: ["ROLE_ADMIN"],
    });
    assert.deepEqual(await basic("ada:guess"), { status: 401, text: "wrong-password" });
    assert.deepEqual(await basic("nobody:guess"), { status: 401, text: "unknown-user" });
    assert.deepEqual(await call("/basic", { authorization: "Basic !!" }), {
      status: 401,
      text: "malformed",
    });
  });

  it("lets in a configured API key and refuses another", async () => {
    const ok = await call("/key", { "x-api-key": "k-0123456789abcdef" });
    assert.equal(ok.status, 200, `${ok.text}\n${worker.output()}`);
    assert.equal(JSON.parse(ok.text).name, "batch");
    assert.deepEqual(await call("/key", { "x-api-key": "k-0123456789abcdeX" }), {
      status: 401,
      text: "unknown-key",
    });
  });

  it("hashes with 100,000 iterations (the hosted cap) and with OWASP's 600,000", async () => {
    for (const iterations of [100_000, 600_000]) {
      const hash = await call(`/hash?iterations=${iterations}`, {});
      assert.equal(hash.status, 200, hash.text);
      assert.match(hash.text, new RegExp(`^\\{pbkdf2-sha256\\}${iterations}\\$`));
    }
  });
});
