import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  errorType,
  type Exchange,
  methodLabel,
  NOT_FOUND_ROUTE,
  observeFetch,
  type RequestObserver,
  responseBytes,
  RouteMarks,
  UNKNOWN_ROUTE,
} from "../../src/observe/request_observer.ts";
import { propertyOptions } from "../property.ts";

describe("observeFetch", () => {
  it("is the fetch itself when nothing observes", () => {
    const fetch = (_: Request) => new Response("x");
    assert.equal(observeFetch(fetch, [], new RouteMarks()), fetch);
  });

  it("runs the observers around the fetch, the first outermost, and passes the answer out", async () => {
    const order: string[] = [];
    const observer = (name: string): RequestObserver => async (_exchange, proceed) => {
      order.push(`${name} in`);
      const response = await proceed();
      order.push(`${name} out ${response.status}`);
      return response;
    };
    const fetch = observeFetch(
      () => {
        order.push("fetch");
        return new Response("ok", { status: 201 });
      },
      [observer("a"), observer("b")],
      new RouteMarks(),
    );
    const response = await fetch(new Request("http://localhost/"));
    assert.equal(response.status, 201);
    assert.deepEqual(order, ["a in", "b in", "fetch", "b out 201", "a out 201"]);
  });

  it("names the marked route, else NOT_FOUND for a 404 and UNKNOWN for the rest", async () => {
    const marks = new RouteMarks();
    const seen: string[] = [];
    const observer: RequestObserver = async (exchange, proceed) => {
      const response = await proceed();
      seen.push(`${exchange.route()} ${exchange.routed()}`);
      return response;
    };
    const fetch = observeFetch(
      (request: Request) => {
        const path = new URL(request.url).pathname;
        if (path === "/a") marks.mark(request, "/{x}");
        return new Response(null, { status: path === "/missing" ? 404 : 405 });
      },
      [observer],
      marks,
    );
    await fetch(new Request("http://localhost/a"));
    await fetch(new Request("http://localhost/missing"));
    await fetch(new Request("http://localhost/other"));
    assert.deepEqual(seen, ["/{x} true", `${NOT_FOUND_ROUTE} false`, `${UNKNOWN_ROUTE} false`]);
  });

  it("lets a request pass untouched, answered as the fetch answers, while every observer is idle", async () => {
    let idle = true;
    let observed = 0;
    const observer: RequestObserver = Object.assign(
      (_exchange: unknown, proceed: () => Promise<Response>) => {
        observed++;
        return proceed();
      },
      { idle: () => idle },
    );
    const answer = new Response("sync");
    const fetch = observeFetch(() => answer, [observer], new RouteMarks());
    // Synchronous, as Hono answers a synchronous handler: no promise per request.
    assert.equal(fetch(new Request("http://localhost/")), answer);
    assert.equal(observed, 0);
    idle = false;
    assert.equal(await fetch(new Request("http://localhost/")), answer);
    assert.equal(observed, 1);
    // One observer that never says it is idle keeps every request observed.
    const always = observeFetch(
      () => answer,
      [observer, (_e, proceed) => proceed()],
      new RouteMarks(),
    );
    idle = true;
    assert.ok(always(new Request("http://localhost/")) instanceof Promise);
  });

  it("marks no route while every observer is idle, and marks again once one records", async () => {
    let idle = true;
    const routes: string[] = [];
    const marks = new RouteMarks();
    const observer: RequestObserver = Object.assign(
      async (exchange: Exchange, proceed: () => Promise<Response>) => {
        const response = await proceed();
        routes.push(exchange.route());
        return response;
      },
      { idle: () => idle },
    );
    const marked: boolean[] = [];
    const fetch = observeFetch(
      (request: Request) => {
        marks.mark(request, "/{x}");
        marked.push(marks.of(request) !== undefined);
        return new Response("ok");
      },
      [observer],
      marks,
    );
    await fetch(new Request("http://localhost/a"));
    idle = false;
    await fetch(new Request("http://localhost/a"));
    idle = true;
    await fetch(new Request("http://localhost/a"));
    assert.deepEqual(marked, [false, true, false]);
    assert.deepEqual(routes, ["/{x}"]);
  });

  it("passes an error of the fetch out through every observer", async () => {
    const fetch = observeFetch(
      () => {
        throw new RangeError("boom");
      },
      [(_e, proceed) => proceed()],
      new RouteMarks(),
    );
    await assert.rejects(Promise.resolve().then(() => fetch(new Request("http://x/"))), RangeError);
  });
});

describe("methodLabel", () => {
  it("keeps the HTTP methods and folds every other text to _OTHER (property)", () => {
    const known = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"];
    for (const method of known) assert.equal(methodLabel(method), method);
    fc.assert(
      fc.property(fc.string(), (method) => {
        assert.equal(methodLabel(method), known.includes(method) ? method : "_OTHER");
      }),
      propertyOptions(),
    );
  });
});

describe("responseBytes", () => {
  it("reads a plain Content-Length and nothing else", () => {
    const of = (value?: string) =>
      responseBytes(
        new Response(null, value === undefined ? {} : { headers: { "content-length": value } }),
      );
    assert.equal(of("12"), 12);
    assert.equal(of(undefined), undefined);
    assert.equal(of("-1"), undefined);
    assert.equal(of("1e3"), undefined);
    assert.equal(of("9".repeat(16)), undefined);
  });
});

describe("errorType", () => {
  it("is the thrown class, else the status of a 5xx, else none", () => {
    assert.equal(errorType(500, new RangeError("x")), "RangeError");
    assert.equal(errorType(500, "a string"), "_OTHER");
    assert.equal(errorType(503), "503");
    assert.equal(errorType(499), undefined);
    assert.equal(errorType(200), undefined);
  });
});
