import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { webServerRequest } from "../../src/http/server_request.ts";

describe("webServerRequest", () => {
  it("reads headers from the Request, joined as Headers.get joins them, and no pre-read body", () => {
    const headers = new Headers([["x-a", "1"], ["x-a", "2"]]);
    const request = new Request("http://localhost/", { headers });
    assert.equal(webServerRequest.header(request, undefined, "X-A"), "1, 2");
    assert.equal(webServerRequest.header(request, undefined, "x-missing"), null);
    assert.equal(webServerRequest.body(undefined), undefined);
  });
});
