import { isJsonObject } from "../../files/json_object.ts";
import { renderValue } from "../render_value.ts";
import { type Mask, maskJson, secretsMask } from "../../../config/secrets_mask.ts";
import { authorize, authSecrets } from "../auth/authorize.ts";
import type { SearchAuth } from "../auth/search_auth.ts";
import { connectionAuth, type SearchConnection } from "../search_connection.ts";
import { connectionDropped, neverSent } from "./send_failure.ts";
import type { Transport } from "./transport.ts";

/** A cluster's answer: the status and the parsed JSON body (`undefined` when there is none). */
export interface SearchResponse {
  readonly status: number;
  readonly body: unknown;
  /**
   * Hosts that took this request and gave no answer before the one that answered: a host that
   * hung may apply it when it resumes, after any later request.
   */
  readonly unansweredBy?: readonly string[];
}

/**
 * A request got no answer: no host could be reached, or the one that took it gave no answer and
 * the request was not safe to send elsewhere (the message then says it may have been applied).
 */
export class SearchTransportError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SearchTransportError";
  }
}

/** How one request may be sent. */
export interface SendOptions {
  /**
   * Whether sending it twice does no harm (a read, an upsert of the same body, a write guarded by
   * sequence numbers): then a host that took it and gave no answer is left for the next one.
   * Default: true for GET and HEAD only.
   */
  readonly repeatable?: boolean;
  /** Aborts the request (the lock was lost, the run was interrupted); never retried elsewhere. */
  readonly signal?: AbortSignal | undefined;
}

/** What a client may be given beside its connection and transport. */
export interface SearchClientOptions {
  /** The clock of SigV4 signatures (tests give a fixed one). Default: the system clock. */
  readonly now?: () => Date;
}

/**
 * The `type` and `reason` of an OpenSearch error body, with the cause the cluster gives beneath
 * them when the reason does not already say it, or a short form of whatever came back. A search's
 * reason is often only "all shards failed": the shard's own reason is in `root_cause`,
 * `failed_shards` or `caused_by`, and an empty `failed_shards` means no shard could be searched.
 */
export function errorDetail(body: unknown): string {
  type Cause = { type?: unknown; reason?: unknown; caused_by?: unknown };
  const isCause = (x: unknown): x is Cause => isJsonObject(x);
  const text = (c: Cause): string =>
    [c.type, c.reason].filter((x) => typeof x === "string" && x !== "").join(": ");
  if (isCause(body) && "error" in body) {
    const error = (body as { error: unknown }).error;
    if (typeof error === "string" && error !== "") return error;
    if (isCause(error)) {
      const top = text(error);
      const { root_cause: roots, failed_shards: shards } = error as {
        root_cause?: unknown;
        failed_shards?: unknown;
      };
      let deepest: Cause | undefined;
      // Bounded: a body is untrusted input, however unlikely a very deep chain is.
      for (let c = error.caused_by, n = 0; isCause(c) && n < 32; c = c.caused_by, n++) deepest = c;
      const cause = [
        Array.isArray(roots) ? roots[0] : undefined,
        Array.isArray(shards) && isCause(shards[0]) ? shards[0].reason : undefined,
        deepest,
      ].find((c): c is Cause => isCause(c) && text(c) !== "");
      let extra: string | undefined;
      if (cause !== undefined) {
        const said = typeof cause.reason === "string" && cause.reason !== ""
          ? cause.reason
          : text(cause);
        if (!top.includes(said)) extra = text(cause);
      } else if (Array.isArray(shards) && shards.length === 0) {
        extra = "no shard of the index was available";
      }
      if (extra !== undefined) return top === "" ? extra : `${top} (${extra})`;
      if (top !== "") return top;
    }
  }
  // AWS answers for itself before the cluster does: {"message": "The security token included
  // in the request is invalid."} (a 403 of SigV4).
  if (isCause(body) && !("error" in body)) {
    const message = (body as { message?: unknown; Message?: unknown }).message ??
      (body as { Message?: unknown }).Message;
    if (typeof message === "string" && message !== "") return message;
  }
  if (body === undefined) return "no body";
  try {
    return JSON.stringify(body).slice(0, 300);
  } catch {
    // A body nested 100,000 deep, which JSON.parse takes, overflows JSON.stringify's stack.
    return renderValue(body, 300).slice(0, 300);
  }
}

/**
 * Sends JSON requests to one connection. All hosts are nodes of one cluster, so a request a host
 * took and did not answer may have been applied: the next host gets it only when it provably never
 * left (connection refused, DNS, connect timeout) or is {@linkcode SendOptions.repeatable}.
 * Otherwise the run stops, saying that the request may or may not have been applied. An HTTP
 * error status is an answer, returned as it is, with the connection's secrets masked in its body.
 * Credentials go only into headers (see auth/authorize.ts), made again for each attempt on each
 * host, and never into a message.
 */
export class SearchClient {
  /** Requests sent so far, host retries included. */
  requests = 0;
  /**
   * Masks each credential of the connection as `***` (as written, URL-encoded and JSON-escaped):
   * error answers and messages are masked with it before anything reads them. A success body is
   * returned as it came; what quotes one (drift lines) masks it with this.
   */
  readonly credentialsMask: Mask;
  readonly #connection: SearchConnection;
  readonly #transport: Transport;
  readonly #auth: SearchAuth | undefined;
  readonly #now: () => Date;
  // The host that answered last: later requests start there instead of retrying dead hosts.
  #preferred = 0;

  constructor(
    connection: SearchConnection,
    transport: Transport,
    options: SearchClientOptions = {},
  ) {
    this.#connection = connection;
    this.#transport = transport;
    this.#auth = connectionAuth(connection);
    this.credentialsMask = secretsMask(authSecrets(this.#auth), { json: true });
    this.#now = options.now ?? (() => new Date());
  }

  /** Sends one request; `path` starts with `/` and may carry a query. */
  async send(
    method: string,
    path: string,
    body?: unknown,
    options: SendOptions = {},
  ): Promise<SearchResponse> {
    const hosts = this.#connection.hosts;
    const repeatable = options.repeatable ?? (method === "GET" || method === "HEAD");
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const request = `${method} ${path.split("?", 1)[0]}`;
    const tries = new HostTries(repeatable);
    for (let i = 0; i < hosts.length; i++) {
      const index = (this.#preferred + i) % hosts.length;
      const origin = hosts[index].origin;
      const { url, headers: auth } = await this.#authorize(
        request,
        hosts[index],
        method,
        path,
        payload,
      );
      this.requests++;
      let answer: { response: Response; text: string };
      try {
        options.signal?.throwIfAborted();
        const init = { method, auth, payload, repeatable, signal: options.signal };
        answer = await this.#fetch(url, init, tries.fresh);
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (tries.failed(origin, this.#cause(request, origin, error, repeatable), error)) i--;
        continue;
      }
      this.#preferred = index;
      const parsed = this.#parse(request, origin, answer.response, answer.text);
      return {
        status: answer.response.status,
        body: parsed,
        ...(tries.unanswered.length === 0 ? {} : { unansweredBy: tries.unanswered }),
      };
    }
    throw new SearchTransportError(
      unansweredMessage(method, request, this.#connection.name, tries.causes, tries.unanswered, {
        hosts: new Set(hosts.map((h) => h.origin)).size,
      }),
    );
  }

  // One attempt on one host: its answer, read whole (an answer cut off mid-body is no answer: the
  // request was sent all the same).
  async #fetch(
    url: URL,
    { method, auth, payload, repeatable, signal }: {
      method: string;
      auth: Record<string, string>;
      payload: string | undefined;
      repeatable: boolean;
      signal: AbortSignal | undefined;
    },
    fresh: boolean,
  ): Promise<{ response: Response; text: string }> {
    const timeout = AbortSignal.timeout(this.#connection.timeoutMs);
    const response = await this.#transport.fetch(url, {
      method,
      headers: {
        accept: "application/json",
        ...(payload === undefined ? {} : { "content-type": "application/json" }),
        ...auth,
      },
      ...(repeatable ? (payload === undefined ? {} : { body: payload }) : sentOnce(payload)),
      redirect: "manual",
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    }, fresh ? { fresh } : undefined);
    return { response, text: await response.text() };
  }

  // Why an attempt on `origin` failed, masked; thrown where the request may have been applied
  // and must not be sent to another host.
  #cause(request: string, origin: string, error: unknown, repeatable: boolean): string {
    const cause = `${origin}: ${this.credentialsMask(describe(error, this.#connection.timeoutMs))}`;
    if (!repeatable && !neverSent(error)) {
      throw new SearchTransportError(
        `${request}: ${cause}; the request may or may not have been applied (it is not ` +
          `sent to another host, where it could be applied twice)`,
        { cause: error },
      );
    }
    return cause;
  }

  // Signed for this host and this attempt: a signature covers the host and the time.
  async #authorize(
    request: string,
    host: URL,
    method: string,
    path: string,
    payload: string | undefined,
  ): Promise<{ url: URL; headers: Readonly<Record<string, string>> }> {
    try {
      return await authorize(
        this.#auth,
        { method, url: join(host, path), body: payload },
        this.#now,
      );
    } catch (error) {
      throw new SearchTransportError(
        `${request}: not sent: its authentication for ${host.origin} failed (${
          this.credentialsMask(String((error as Error)?.message ?? error))
        })`,
      );
    }
  }

  // The body of an answer, parsed; an HTML page where the cluster's JSON was due is refused.
  #parse(request: string, origin: string, response: Response, text: string): unknown {
    // An error may echo the request's headers: masked before anything reads it (and before it
    // is cut short, which could leave part of a secret). A success is returned as it came.
    const failed = response.status >= 300;
    // A HEAD has no body: only the content type tells a login page's 200 from the cluster's.
    if (
      !failed && text === "" &&
      /^\s*text\/html/i.test(response.headers.get("content-type") ?? "")
    ) {
      throw new SearchTransportError(
        `${request}: ${origin} answered ${response.status} with an HTML page (text/html), not ` +
          "the cluster's JSON (a proxy or a login page in front of it?)",
      );
    }
    if (text === "") return undefined;
    try {
      const parsed = JSON.parse(text);
      return failed ? maskJson(parsed, this.credentialsMask) : parsed;
    } catch {
      const page = htmlPage(this.credentialsMask(text));
      // A proxy's page, or a login form in front of the cluster: never a found resource.
      if (page !== undefined && !failed) {
        throw new SearchTransportError(
          `${request}: ${origin} answered ${response.status} with ${page}, not the ` +
            "cluster's JSON (a proxy or a login page in front of it?)",
        );
      }
      return { error: page ?? (failed ? this.credentialsMask(text) : text).slice(0, 300) };
    }
  }
}

/**
 * Why a request got no answer from any host of `connection`, from each host's `causes`. A read
 * changes nothing; a write a host took (`unanswered`) may land after its timeout (a create waits
 * for its shards while the cluster recovers), and was one that is safe to send again.
 */
function unansweredMessage(
  method: string,
  request: string,
  connection: string,
  causes: readonly string[],
  unanswered: readonly string[],
  { hosts }: { hosts: number },
): string {
  const said = `(${causes.join("; ")})`;
  if (unanswered.length === 0 || method === "GET" || method === "HEAD") {
    return `${request}: no host of "${connection}" answered ${said}`;
  }
  const what = unanswered.length === hosts
    ? `every host took it and none answered ${said}`
    : `no host of "${connection}" answered ${said}; ${unanswered.join(", ")} took it`;
  return `${request}: ${what}: the cluster may still apply it: whether it was applied is unknown ` +
    "(a create waits for its shards while the cluster recovers; GET /_cluster/health shows its " +
    "state). It is safe to send again: run again once the cluster answers";
}

/**
 * `an HTML page titled "..."` for a body that is an HTML document, else `undefined`: the page
 * itself (markup, a server's version) says nothing more, and a title from an untrusted host is
 * clipped and kept to one printable line.
 */
function htmlPage(text: string): string | undefined {
  if (!/^\s*<(?:!doctype\s+html|html|head|body)[\s>]/i.test(text)) return undefined;
  const title = (/<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1] ?? "")
    .replace(/[\p{Cc}\u2028\u2029]+/gu, " ").replace(/ {2,}/g, " ").trim().slice(0, 100);
  return title === "" ? "an HTML page" : `an HTML page titled ${JSON.stringify(title)}`;
}

// The failed attempts of one request, host after host. A repeatable request whose connection
// dropped unanswered is sent once more to the same host before the next, on a connection of its
// own: a proxy or balancer may have closed the idle kept-alive connection it went out on, and
// every other one in the pool with it.
class HostTries {
  readonly causes: string[] = [];
  /** The hosts that kept the request unanswered. */
  readonly unanswered: string[] = [];
  readonly #repeatable: boolean;
  #droppedOnce = false;
  #fresh = false;

  constructor(repeatable: boolean) {
    this.#repeatable = repeatable;
  }

  /** The next attempt goes out on a connection of its own. */
  get fresh(): boolean {
    return this.#fresh;
  }

  /** Counts a failed attempt on `origin`; true where the same host is to be tried again. */
  failed(origin: string, cause: string, error: unknown): boolean {
    this.causes.push(cause);
    // A hung host keeps the request; a dropped connection (a proxy closing an idle one) does not.
    if (!neverSent(error) && !connectionDropped(error) && !this.unanswered.includes(origin)) {
      this.unanswered.push(origin);
    }
    this.#fresh = false;
    if (this.#repeatable && !this.#droppedOnce && connectionDropped(error)) {
      this.#droppedOnce = true;
      this.#fresh = true;
      return true;
    }
    return false;
  }
}

/**
 * The body of a request that must not be sent twice, as a stream. Deno's fetch sends a request
 * again, once, when the host closes the connection without answering, but only when it can copy
 * the body (denoland/deno#35610): a stream it cannot copy, so it never does. An empty stream
 * stands for no body.
 */
function sentOnce(payload: string | undefined): RequestInit {
  return {
    body: new Blob(payload === undefined ? [] : [payload]).stream(),
    duplex: "half",
  } as RequestInit;
}

function join(host: URL, path: string): URL {
  const base = host.href.endsWith("/") ? host.href.slice(0, -1) : host.href;
  return new URL(base + path);
}

function describe(error: unknown, timeoutMs: number): string {
  const e = error as {
    name?: string;
    message?: string;
    cause?: { code?: string; message?: string };
  };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") {
    return `no answer within ${timeoutMs / 1000} s`;
  }
  const cause = e?.cause?.code ?? e?.cause?.message;
  return cause ? `${e.message} (${cause})` : String(e?.message ?? error);
}
