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
 * The part of connection `name` in the `search` component: UP while `GET _cluster/health` answers
 * `green` or `yellow`, with the answer's figures (`status`, `cluster_name`, `number_of_nodes`...)
 * as Spring Boot's Elasticsearch indicator shows them; DOWN when it answers `red`, when it fails,
 * or once `timeoutMs` (`management.health.timeout`) passes. The request itself gives up then,
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
      mask ??= composeMasks(
        maskUrls,
        secretsMask(clientSecrets(client), { json: true }),
        credentials,
      );
      let body: unknown;
      try {
        ({ body } = await client.cluster.health({}, { requestTimeout: timeoutMs, maxRetries: 0 }));
      } catch (error) {
        const reason = reasonOf(error);
        // A connection's own error may name it already.
        throw new Error(mask(
          reason.includes(`search connection "${name}"`)
            ? reason
            : `search connection "${name}"${nodeOf(error)}: ${reason}`,
        ));
      }
      const details = figures(body);
      if (details.status === "green" || details.status === "yellow") return details;
      const cluster = typeof details.cluster_name === "string" ? ` "${details.cluster_name}"` : "";
      throw new Error(mask(
        details.status === "red"
          ? `search connection "${name}": the cluster${cluster} is red (${
            String(details.unassigned_shards ?? "some")
          } shards unassigned)`
          : `search connection "${name}": _cluster/health answered no status of green, yellow ` +
            `or red (${JSON.stringify(details.status ?? null)})`,
      ));
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
function nodeOf(error: unknown): string {
  const url = (error as ClientError | null)?.meta?.meta?.connection?.url;
  if (!(url instanceof URL)) return "";
  return ` at ${url.protocol}//${url.host}`;
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
