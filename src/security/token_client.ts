/**
 * Calls to another service with a token of the app's own (OAuth 2.0 client credentials, RFC 6749
 * 4.4): each `security.oauth2.client.registration.<name>` is a `TokenClient` bean of that name.
 * Its token is fetched at the first call and kept until shortly before it expires; calls that
 * need one while it is being fetched wait for that fetch; a `401` from the service drops it and
 * the call is sent once more with a new one.
 *
 * @module
 */
import { maskUrls } from "../config/secrets_mask.ts";
import { deadline } from "../runtime/deadline.ts";
import { shownValue } from "../shown_value.ts";
import { clientAuthorization } from "./client_authentication.ts";
import type { ClientRegistration } from "./client_registrations.ts";
import { TokenClientError } from "./token_client_error.ts";

/** What a client is made with besides its registration: for tests. */
export interface TokenClientOptions {
  /** The wall clock (epoch ms), for the token's expiry. */
  readonly now?: () => number;
  /** The fetch of the token endpoint, the discovery document and the calls. */
  readonly fetch?: typeof fetch;
  /** How long a token request may take, in ms (5 s). */
  readonly timeoutMs?: number;
}

/** How long before its expiry a token is renewed, at most: Spring's clock skew for it. */
const RENEW_BEFORE_MS = 60_000;

interface HeldToken {
  readonly value: string;
  /** When it is renewed (epoch ms). */
  readonly renewAt: number;
}

/**
 * The calls of one registration, with its token: `await client.fetch(url, init)` as the runtime's
 * `fetch`, with `Authorization: Bearer` added.
 *
 * @example A client and its service, with the token endpoint served from the same app
 * ```ts
 * import assert from "node:assert/strict";
 * import { TokenClient } from "@thaw/thaw/security";
 *
 * const served: string[] = [];
 * const client = new TokenClient({
 *   name: "billing",
 *   clientId: "orders",
 *   clientSecret: "s3cret",
 *   scopes: ["billing:write"],
 *   endpoint: { kind: "token-uri", url: "http://id.test/token" },
 *   where: "billing",
 * }, {
 *   fetch: async (input, init) => {
 *     const request = new Request(input, init);
 *     if (request.url === "http://id.test/token") {
 *       return Response.json({ access_token: "t1", token_type: "Bearer", expires_in: 300 });
 *     }
 *     served.push(request.headers.get("authorization") ?? "");
 *     return new Response("ok");
 *   },
 * });
 * assert.equal(await (await client.fetch("http://billing.test/invoices")).text(), "ok");
 * assert.deepEqual(served, ["Bearer t1"]);
 * ```
 */
export class TokenClient {
  /** The registration's name: the bean's. */
  readonly name: string;
  readonly #registration: ClientRegistration;
  readonly #now: () => number;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;
  readonly #authorization: string;
  #held: HeldToken | undefined;
  #pending: Promise<HeldToken> | undefined;
  #tokenUrl: string | undefined;

  /**
   * A client of `registration`; `security()` makes one bean of each configured registration.
   *
   * @param registration the registration, as `security()` reads it from the configuration
   * @param options the clock, the fetch and the token request's timeout
   */
  constructor(registration: ClientRegistration, options: TokenClientOptions = {}) {
    this.name = registration.name;
    this.#registration = registration;
    this.#now = options.now ?? (() => Date.now());
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.#authorization = clientAuthorization(registration.clientId, registration.clientSecret);
    if (registration.endpoint.kind === "token-uri") this.#tokenUrl = registration.endpoint.url;
  }

  /**
   * The access token to send now: the one held until shortly before it expires, else a new one
   * (one request for every caller waiting). A `TokenClientError` when none can be had.
   */
  async token(): Promise<string> {
    return (await this.#current()).value;
  }

  /**
   * `fetch(input, init)` with `Authorization: Bearer <token>`. A `401` answer drops the token
   * and sends the call once more with a new one, unless its body is a stream (which cannot be
   * sent twice): then the `401` is the answer. A redirect is answered as it is
   * (`redirect: "manual"`) unless `init` says otherwise.
   */
  async fetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const held = await this.#current();
    const first = await this.#fetch(withToken(input, init, held.value));
    if (first.status !== 401) return first;
    // Another call may have renewed it already: only the token this call used is dropped, and
    // it is dropped whether this call is sent again or not.
    if (this.#held === held) this.#held = undefined;
    if (!replayable(input, init)) return first;
    await first.body?.cancel();
    const renewed = await this.#current();
    return await this.#fetch(withToken(input, init, renewed.value));
  }

  #current(): Promise<HeldToken> {
    const held = this.#held;
    if (held !== undefined && this.#now() < held.renewAt) return Promise.resolve(held);
    if (this.#pending === undefined) {
      const pending: Promise<HeldToken> = this.#request().then(
        (token) => {
          this.#held = token;
          return token;
        },
      ).finally(() => {
        if (this.#pending === pending) this.#pending = undefined;
      });
      this.#pending = pending;
    }
    return this.#join(this.#pending);
  }

  /**
   * Waits for the token request under way, no longer than it may take: on workerd, a fetch whose
   * request went away never settles, and would hold every call that joined it, and every later
   * one. Given up on, it is forgotten, and the next call asks again.
   */
  #join(pending: Promise<HeldToken>): Promise<HeldToken> {
    // The discovery document and the token: two requests at most, each within the timeout.
    return deadline(pending, 2 * this.#timeoutMs + 1_000, () => {
      if (this.#pending === pending) this.#pending = undefined;
      return this.#error("the token request did not settle");
    });
  }

  async #request(): Promise<HeldToken> {
    const url = this.#tokenUrl ?? (this.#tokenUrl = await this.#discover());
    const { scopes } = this.#registration;
    const form = new URLSearchParams({ grant_type: "client_credentials" });
    if (scopes.length > 0) form.set("scope", scopes.join(" "));
    const sentAt = this.#now();
    const body = await this.#json(url, "the token endpoint", {
      method: "POST",
      headers: {
        authorization: this.#authorization,
        accept: "application/json",
        "content-type": "application/x-www-form-urlencoded",
      },
      body: form.toString(),
    });
    const { access_token: value, token_type: type, expires_in: expiresIn } = body;
    if (typeof value !== "string" || value === "" || /[^\x21-\x7E]/.test(value)) {
      throw this.#error(`the token endpoint ${maskUrls(url)} answered no usable access_token`);
    }
    if (typeof type !== "string" || type.toLowerCase() !== "bearer") {
      throw this.#error(
        `the token endpoint ${maskUrls(url)} answered a token of type ${shownValue(type)}, ` +
          "not Bearer",
      );
    }
    // Counted from the request, which the server's clock started from at the latest. A number,
    // or its text (some servers send "3599" or "3599.0"); else a JWT's own exp; else none: kept
    // until a service answers 401.
    const seconds = typeof expiresIn === "string" && /^\d{1,12}(?:\.\d+)?$/.test(expiresIn)
      ? Number(expiresIn)
      : expiresIn;
    const lifetime = typeof seconds === "number" && Number.isFinite(seconds)
      ? Math.max(0, seconds) * 1000
      : lifetimeOfJwt(value, sentAt);
    // One that expires at once is used once: the next call asks again.
    const renewAt = lifetime === undefined
      ? Infinity
      : sentAt + lifetime - Math.min(RENEW_BEFORE_MS, lifetime / 2);
    return { value, renewAt };
  }

  /** The issuer's `token_endpoint`, from its discovery document. */
  async #discover(): Promise<string> {
    const endpoint = this.#registration.endpoint;
    const issuer = endpoint.kind === "issuer" ? endpoint.issuer : "";
    const url = `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
    const document = await this.#json(url, "the discovery document", {
      headers: { accept: "application/json" },
    });
    if (document.issuer !== issuer) {
      throw this.#error(
        `${maskUrls(url)} names the issuer ${shownValue(document.issuer)}, not ${maskUrls(issuer)}`,
      );
    }
    const tokenEndpoint = document.token_endpoint;
    if (typeof tokenEndpoint !== "string" || !/^https?:\/\//.test(tokenEndpoint)) {
      throw this.#error(`${maskUrls(url)} names no http(s) token_endpoint`);
    }
    return tokenEndpoint;
  }

  async #json(url: string, what: string, init: RequestInit): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await this.#fetch(url, {
        ...init,
        redirect: "manual",
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      throw this.#error(maskUrls(`${what} ${url} did not answer: ${(error as Error).message}`));
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      body = undefined;
    }
    if (response.status !== 200) {
      // RFC 6749, 5.2: the error's code says why (invalid_client, invalid_scope).
      const code = typeof body === "object" && body !== null
        ? (body as { error?: unknown }).error
        : undefined;
      throw this.#error(
        `${what} ${maskUrls(url)} answered ${response.status}` +
          (typeof code === "string" ? ` (${shownValue(code)})` : ""),
        response.status,
      );
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw this.#error(`${what} ${maskUrls(url)} answered something that is not a JSON object`);
    }
    return body as Record<string, unknown>;
  }

  #error(why: string, status?: number): TokenClientError {
    return new TokenClientError(this.#registration.where, why, status);
  }
}

/**
 * What is left of a JWT access token's life at `now` (ms), by its `exp`; none when the token is
 * no JWT or names no `exp`. Read, not verified: the service checks the token, and a forged `exp`
 * only makes the client ask for a new one sooner or later.
 */
function lifetimeOfJwt(token: string, now: number): number | undefined {
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const payload = JSON.parse(atob(parts[1].replace(/-/g, "+").replace(/_/g, "/")));
    const exp = (payload as { exp?: unknown } | null)?.exp;
    return typeof exp === "number" && Number.isFinite(exp)
      ? Math.max(0, exp * 1000 - now)
      : undefined;
  } catch {
    return undefined;
  }
}

// Redirects are not followed unless the call asks: a runtime that keeps Authorization across
// origins would hand the token to whatever host a service redirects to.
function withToken(input: string | URL | Request, init: RequestInit | undefined, token: string) {
  const request = new Request(input, { ...init, redirect: init?.redirect ?? "manual" });
  request.headers.set("authorization", `Bearer ${token}`);
  return request;
}

// A body that can be sent twice: none, or one held whole (a text, bytes, a form, a Blob).
function replayable(input: string | URL | Request, init: RequestInit | undefined): boolean {
  const body = init?.body;
  if (body === undefined || body === null) {
    return !(input instanceof Request && input.body !== null);
  }
  return !(body instanceof ReadableStream) &&
    typeof (body as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] !== "function";
}
