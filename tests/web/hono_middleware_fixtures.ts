// What the tests of Hono's own middleware on a Thaw app share: the app's controller, and the
// app reached over `app.fetch` or a real socket (raw requests included).
import { after, before } from "node:test";
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import {
  type Application,
  bootstrap,
  type BootstrapOptions,
  GetMapping,
  HttpException,
  HttpStatus,
  PathVariable,
  PostMapping,
  RequestBody,
  ResponseEntity,
  RestController,
} from "../../mod.ts";
import { listen } from "../../server.ts";
import type { Transport } from "../helpers.ts";

// ---------------------------------------------------------------------------------------------
// The apps' controllers.

/** Large enough (about 2.5 KB of JSON) for compression to be worth it. */
export const ITEMS = Array.from({ length: 60 }, (_, i) => ({ id: i, name: `item number ${i}` }));
export const PAGE = "http://page.example";
export const TOKEN = "s3cret-token";
export const JWT_SECRET = "a-secret-of-at-least-thirty-two-bytes!";

@RestController()
export class Catalog {
  @GetMapping("/items")
  list(): typeof ITEMS {
    return ITEMS;
  }

  @GetMapping("/items/{id}", PathVariable("id", Number))
  one(id: number): { id: number } {
    return { id };
  }

  @PostMapping("/items", RequestBody())
  create(body: unknown): { created: unknown } {
    return { created: body };
  }

  @GetMapping("/conflict")
  conflict(): never {
    throw new HttpException(HttpStatus.CONFLICT, "taken");
  }

  @GetMapping("/broken")
  broken(): never {
    throw new Error("internal detail");
  }

  @GetMapping("/powered")
  powered(): ResponseEntity {
    return ResponseEntity.ok({ ok: true }).withHeader("X-Powered-By", "Thaw");
  }
}

// ---------------------------------------------------------------------------------------------
// Reaching an app.

/** An answer as its bytes arrived, nothing decoded. */
export interface RawAnswer {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
}

export interface RawInit {
  headers?: Record<string, string>;
  /** A body of declared length. */
  body?: string;
  /** A body sent in these chunks with no declared length (chunked over a socket). */
  chunks?: readonly string[];
}

/** How a test reaches an app. */
export interface Target {
  readonly transport: Transport;
  /** `app.fetch`, or the runtime's `fetch` to the server (which may decode bodies itself). */
  send(method: string, path: string, init?: RequestInit): Promise<Response>;
  /**
   * The answer's bytes exactly as sent: `app.fetch`'s own body, or the socket's bytes read with
   * `node:http`, which decodes nothing and sends exactly the headers given.
   */
  raw(method: string, path: string, init?: RawInit): Promise<RawAnswer>;
  close(): Promise<void>;
}

const encoder = new TextEncoder();

export function streamOf(chunks: readonly string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

export function rawOverSocket(
  port: number,
  method: string,
  path: string,
  init: RawInit,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...init.headers, connection: "close" };
    if (init.body !== undefined) {
      headers["content-length"] = String(encoder.encode(init.body).length);
    }
    // No agent: one connection per request, none left open for `server.close()` to wait on.
    const req = httpRequest(
      { host: "127.0.0.1", port, method, path, headers, agent: false },
      (res) => {
        const parts: Uint8Array[] = [];
        res.on("data", (chunk: Uint8Array) => void parts.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const answerHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined) continue;
            for (const one of Array.isArray(value) ? value : [value]) {
              answerHeaders.append(name, one);
            }
          }
          const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
          let at = 0;
          for (const part of parts) {
            bytes.set(part, at);
            at += part.length;
          }
          resolve({ status: res.statusCode ?? 0, headers: answerHeaders, bytes });
        });
      },
    );
    req.on("error", reject);
    if (init.body !== undefined) req.end(init.body);
    else {
      for (const chunk of init.chunks ?? []) req.write(chunk);
      req.end();
    }
  });
}

export async function target(app: Application, transport: Transport): Promise<Target> {
  if (transport === "app.fetch") {
    const send = (method: string, path: string, init: RequestInit = {}) =>
      Promise.resolve(app.fetch(new Request(`http://localhost${path}`, { ...init, method })));
    return {
      transport,
      send,
      raw: async (method, path, init = {}) => {
        const body = init.chunks !== undefined ? streamOf(init.chunks) : init.body;
        const response = await send(method, path, {
          headers: init.headers,
          body,
          ...(init.chunks !== undefined ? { duplex: "half" } : {}),
        } as RequestInit);
        return {
          status: response.status,
          headers: response.headers,
          bytes: new Uint8Array(await response.arrayBuffer()),
        };
      },
      close: async () => {},
    };
  }
  const server = await listen(app, { port: 0, hostname: "127.0.0.1" });
  return {
    transport,
    send: (method, path, init = {}) =>
      fetch(`http://127.0.0.1:${server.port}${path}`, { ...init, method }),
    raw: (method, path, init = {}) => rawOverSocket(server.port, method, path, init),
    close: () => server.close(),
  };
}

/** A suite of one app over one transport: boots it in `before`, closes its server in `after`. */
export function withApp(transport: Transport, options: () => BootstrapOptions): () => Target {
  let reached: Target | undefined;
  before(async () => {
    reached = await target(await bootstrap(options()), transport);
  });
  after(async () => {
    await reached?.close();
  });
  return () => reached!;
}

/** Thaw's default error body, checked for the status it names. */
export async function errorBody(
  response: Response,
  status: number,
): Promise<Record<string, unknown>> {
  assert.equal(response.status, status);
  assert.equal(response.headers.get("content-type"), "application/json");
  const body = await response.json() as Record<string, unknown>;
  assert.equal(body.status, status);
  return body;
}

export async function decode(bytes: Uint8Array, format: "gzip" | "deflate"): Promise<string> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream()
    .pipeThrough(new DecompressionStream(format));
  return await new Response(stream).text();
}

/** Thaw's own answers, which global middleware runs around as it runs around routes. */
export const FRAMEWORK_ANSWERS: readonly (readonly [string, string, number])[] = [
  ["GET", "/nowhere", 404],
  ["DELETE", "/items", 405],
  ["OPTIONS", "/items", 204],
];
