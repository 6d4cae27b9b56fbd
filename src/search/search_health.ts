// The `search` component of the app's health: one part per search connection, under its name, as
// the datasources are parts of `db`. Offered by the client bean itself (health_contribution.ts),
// so that an app without the actuator carries no check, and an app's own `@HealthIndicator
// ("search")` shares the component rather than clashing with it.
import type { Client } from "@opensearch-project/opensearch";
import { HEALTH_CONTRIBUTION, type HealthContribution } from "../actuator/health_contribution.ts";
import { composeMasks, type Mask, maskUrls, noMask, secretsMask } from "../config/secrets_mask.ts";
import { isPlainObject } from "../object_guards.ts";

/** The component's name in the health answer, as the datasources' is `db`. */
export const SEARCH_HEALTH = "search";

/**
 * The part of connection `name` in the `search` component. Every node of the client is asked
 * `GET _cluster/health` at once: UP while any answers `green` or `yellow`, with the answer's
 * figures (`status`, `cluster_name`, `number_of_nodes`...) as Spring Boot's Elasticsearch
 * indicator shows them, and `unanswered` naming each node that did not answer and why; DOWN when
 * the cluster is `red`, or when no node answers within `timeoutMs` (`management.health.timeout`). The request itself gives up then,
 * without retrying, so that a node that hangs holds nothing past the probe. The reason of a DOWN
 * names the connection and its node, never what the client authenticates with: a URL's
 * credentials, an `Authorization` header, a password, a token or an AWS secret it was given are
 * masked in it, as is what `credentials` masks (the connection's own secrets, where the client
 * does not hold them: a `Connection` class that signs each request itself).
 *
 * @param name the connection's name (its bean's), which the reason of a DOWN names
 * @param client the connection's client
 * @param timeoutMs how long one check may take, in milliseconds
 * @param credentials masks the connection's secrets in a reason; none besides the client's when
 *   not given
 */
export function searchHealth(
  name: string,
  client: Client,
  timeoutMs: number,
  credentials: Mask = noMask,
): HealthContribution {
  // Read at the first check: the client's configuration no longer changes by then.
  let mask: Mask | undefined;
  return {
    name: SEARCH_HEALTH,
    keyed: true,
    check: async () => {
      const masked = mask ??= composeMasks(
        maskUrls,
        secretsMask(clientSecrets(client), { json: true }),
        credentials,
      );
      const nodes = nodesOf(client);
      // Every node at once, each within the timeout: the client's calls go to whichever node
      // answers (a node that failed is set aside), so the cluster is UP while any one does.
      const answers = nodes.length === 0
        ? [await clusterHealth(client, timeoutMs)]
        : await Promise.all(nodes.map((node) => nodeHealth(client, node, timeoutMs)));
      const failed = answers.filter((answer) => answer.error !== undefined);
      const healthy = answers.filter((answer) => answer.error === undefined);
      const red = healthy.find((answer) => answer.details.status === "red");
      const up = healthy.find((answer) =>
        answer.details.status === "green" || answer.details.status === "yellow"
      );
      const unanswered = failed.map((answer) => `${answer.node}: ${reasonOf(answer.error)}`);
      if (up !== undefined && red === undefined) {
        return unanswered.length === 0
          ? up.details
          : { ...up.details, unanswered: unanswered.map((line) => masked(line)) };
      }
      const details = (red ?? healthy[0])?.details;
      if (details !== undefined) {
        const cluster = typeof details.cluster_name === "string"
          ? ` "${details.cluster_name}"`
          : "";
        throw new Error(mask(
          details.status === "red"
            ? `search connection "${name}": the cluster${cluster} is red (${
              String(details.unassigned_shards ?? "some")
            } shards unassigned)`
            : `search connection "${name}": _cluster/health answered no status of green, ` +
              `yellow or red (${JSON.stringify(details.status ?? null)})`,
        ));
      }
      if (failed.length === 1) {
        const [{ error }] = failed;
        const reason = reasonOf(error);
        // A connection's own error may name it already.
        throw new Error(mask(
          reason.includes(`search connection "${name}"`)
            ? reason
            : `search connection "${name}"${nodeOf(error, failed[0].node)}: ${reason}`,
        ));
      }
      throw new Error(
        mask(`search connection "${name}": no node answered: ${unanswered.join("; ")}`),
      );
    },
  };
}

/**
 * Makes `client` offer the part of connection `name` in the app's `search` health component
 * ({@linkcode searchHealth}), which the actuator asks of every bean: called on the bean's
 * instance, so that the part goes under the bean's name. Nothing else of the client changes.
 *
 * @param client the connection's client, as its bean holds it
 * @param name the connection's name (its bean's)
 * @param timeoutMs `management.health.timeout`, in milliseconds
 * @param credentials masks the connection's secrets (see {@linkcode searchHealth})
 */
export function offerSearchHealth(
  client: Client,
  name: string,
  timeoutMs: number,
  credentials: Mask = noMask,
): void {
  const contribution = searchHealth(name, client, timeoutMs, credentials);
  Object.defineProperty(client, HEALTH_CONTRIBUTION, {
    value: (): HealthContribution => contribution,
    configurable: true,
  });
}

// What cluster health says of itself: the figures, not any nested object a proxy's answer holds.
function figures(body: unknown): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  if (!isPlainObject(body)) return out;
  for (const [key, value] of Object.entries(body)) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
      out[key] = value;
    }
  }
  return out;
}

interface ClientError {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly statusCode?: unknown;
  readonly meta?: { readonly meta?: { readonly connection?: { readonly url?: unknown } | null } };
}

// ` at http://node:9200`: the node asked, without its userinfo (the client keeps it in the URL).
function nodeOf(error: unknown, node: string | undefined): string {
  if (node !== undefined) return ` at ${node}`;
  const url = (error as ClientError | null)?.meta?.meta?.connection?.url;
  if (!(url instanceof URL)) return "";
  return ` at ${url.protocol}//${url.host}`;
}

/** One node's answer to `GET _cluster/health`: its figures, or why it gave none. */
interface NodeAnswer {
  /** `http://host:port`, without userinfo; undefined where the client asked a node of its own. */
  readonly node: string | undefined;
  readonly details: Record<string, string | number | boolean>;
  readonly error?: unknown;
}

/** What this reads of one of the client's connections. */
interface PoolConnection {
  readonly url: URL;
  request(
    params: Record<string, unknown>,
    callback: (error: Error | null, response: NodeResponse | null) => void,
  ): { abort(): void };
}

/** The answer a connection hands on: a node:http response, or one read whole already. */
interface NodeResponse {
  readonly statusCode?: number;
  setEncoding(encoding: string): unknown;
  on(event: string, listener: (chunk?: unknown) => void): unknown;
  destroy?(): unknown;
}

// The connections of the client's pool, every one of them: a node the client set aside is asked
// too, as it may answer again.
function nodesOf(client: Client): PoolConnection[] {
  const pool = (client as { connectionPool?: { connections?: unknown } }).connectionPool;
  if (!Array.isArray(pool?.connections)) return [];
  return (pool.connections as PoolConnection[]).filter((connection) =>
    connection?.url instanceof URL && typeof connection.request === "function"
  );
}

// Where the client has no pool this reads: the client's own call, without retries.
async function clusterHealth(client: Client, timeoutMs: number): Promise<NodeAnswer> {
  try {
    const { body } = await client.cluster.health({}, {
      requestTimeout: timeoutMs,
      maxRetries: 0,
    });
    return { node: undefined, details: figures(body) };
  } catch (error) {
    return { node: undefined, details: {}, error };
  }
}

// `GET _cluster/health` on one connection, with the client's headers (its own, then the
// connection's, as the client sends them), given up after `timeoutMs`. Nothing is retried, and the
// node is not set aside: the probe only looks.
function nodeHealth(
  client: Client,
  connection: PoolConnection,
  timeoutMs: number,
): Promise<NodeAnswer> {
  const node = `${connection.url.protocol}//${connection.url.host}`;
  const headers = (client as { transport?: { headers?: unknown } }).transport?.headers;
  return new Promise<NodeAnswer>((resolve) => {
    let settled = false;
    const settle = (answer: NodeAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const fail = (error: unknown) => settle({ node, details: {}, error });
    // The connection gives up itself too; this holds where one of the app's own does not.
    const timer = setTimeout(() => {
      const error = new Error("Request timed out");
      error.name = "TimeoutError";
      fail(error);
      request?.abort();
    }, timeoutMs);
    let request: { abort(): void } | undefined;
    try {
      request = connection.request({
        method: "GET",
        path: "/_cluster/health",
        querystring: "",
        headers: { ...(isPlainObject(headers) ? headers : {}) },
        timeout: timeoutMs,
        // The connection lets no runtime send it again by itself (fetch_connection.ts).
        sentOnce: true,
      }, (error, response) => {
        if (error !== null || response === null) return fail(error ?? new Error("no answer"));
        readAnswer(response).then((text) => {
          const status = response.statusCode ?? 0;
          const body = parsed(text);
          if (status >= 200 && status < 300) return settle({ node, details: figures(body) });
          fail(responseError(status, body));
        }, fail);
      });
    } catch (error) {
      fail(error);
    }
  });
}

function readAnswer(response: NodeResponse): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let text = "";
    response.setEncoding("utf8");
    response.on("data", (chunk) => (text += String(chunk)));
    response.on("end", () => resolve(text));
    response.on("error", (error) => reject(error));
  });
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// The client's `ResponseError` of an answer that is not 2xx, as its message reads it.
function responseError(status: number, body: unknown): Error {
  const error = new Error(responseMessage(body)) as Error & { statusCode?: number };
  error.name = "ResponseError";
  error.statusCode = status;
  return error;
}

function responseMessage(body: unknown): string {
  const failure = isPlainObject(body) ? body.error : undefined;
  if (!isPlainObject(failure) || typeof failure.type !== "string") return "Response Error";
  if (!Array.isArray(failure.root_cause)) return failure.type;
  return `${failure.type}: ${
    failure.root_cause.map((entry) =>
      `[${String((entry as { type?: unknown })?.type)}] Reason: ${
        String((entry as { reason?: unknown })?.reason)
      }`
    ).join("; ")
  }`;
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const { statusCode } = error as ClientError;
  const status = typeof statusCode === "number" ? `HTTP ${statusCode}: ` : "";
  return `${status}${error.name}: ${error.message}`;
}

// What the client authenticates with, wherever it keeps it: its connections' URLs and headers,
// its pool's and its transport's auth, its own headers. Read, not trusted: a field the package
// drops is simply not found.
function clientSecrets(client: Client): string[] {
  const secrets: string[] = [];
  const add = (value: unknown) => {
    if (typeof value === "string" && value !== "") secrets.push(value);
  };
  // A password alone, as the runner masks one (authorize.ts): from 8 characters, or masking it
  // would garble every message that holds its letters; its Authorization header is masked whole.
  const addPassword = (value: unknown) => {
    if (typeof value === "string" && value.length >= 8) secrets.push(value);
  };
  const addAuth = (auth: unknown) => {
    if (!isPlainObject(auth)) return;
    addPassword(auth.password);
    add(auth.bearer);
    const apiKey = auth.apiKey;
    if (isPlainObject(apiKey)) {
      add(apiKey.api_key);
    } else add(apiKey);
    const credentials = auth.credentials;
    if (isPlainObject(credentials)) {
      add(credentials.secretAccessKey);
      add(credentials.sessionToken);
    }
  };
  const addHeaders = (headers: unknown) => {
    if (!isPlainObject(headers)) return;
    for (const [key, value] of Object.entries(headers)) {
      if (key.toLowerCase() !== "authorization" || typeof value !== "string") continue;
      add(value);
      // `Basic dXNlcjpzM2NyZXQ=`, `Bearer abc`: the credential alone, as an echo may quote it.
      add(value.replace(/^\S+\s+/, ""));
    }
  };
  const pool = (client as { connectionPool?: { auth?: unknown; connections?: unknown } })
    .connectionPool;
  addAuth(pool?.auth);
  if (Array.isArray(pool?.connections)) {
    for (const connection of pool.connections as { url?: unknown; headers?: unknown }[]) {
      if (connection.url instanceof URL) {
        addPassword(decodeURIComponent(connection.url.password));
        addPassword(connection.url.password);
      }
      addHeaders(connection.headers);
    }
  }
  const transport = (client as { transport?: { _auth?: unknown; headers?: unknown } }).transport;
  addAuth(transport?._auth);
  addHeaders(transport?.headers);
  return secrets;
}
