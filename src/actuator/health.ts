// Pure: the checks' results in, the answer out. Spring Boot's shape: `{"status":"UP"}`, and with
// show-details `always` the components by name, each with its details when it has any.

/** A component's status, and the app's. */
export type HealthStatus = "UP" | "DOWN";

/** Whether the health answer shows each component and its details. */
export type ShowDetails = "always" | "never";

/** Details a component reports: a plain object, as JSON reads it back. */
export type HealthDetails = { readonly [key: string]: unknown };

/** One component's health, as its check reported it. */
export interface ComponentHealth {
  readonly status: HealthStatus;
  /** Absent when there are none. */
  readonly details?: HealthDetails;
}

/** The body of a health answer. */
export interface HealthBody {
  readonly status: HealthStatus;
  /** By name, sorted; only with show-details `always`, and only when there are any. */
  readonly components?: { readonly [name: string]: ComponentHealth };
}

/** A health answer: 200 for UP, 503 for DOWN, as Spring Boot maps them. */
export interface HealthAnswer {
  readonly httpStatus: 200 | 503;
  readonly body: HealthBody;
}

/** The answer of a status alone: liveness, readiness. */
export function statusAnswer(status: HealthStatus): HealthAnswer {
  return { httpStatus: status === "UP" ? 200 : 503, body: { status } };
}

/**
 * One component of two checks of one name (the datasources' `db` and the lock provider's): DOWN
 * when either is, with the details of both.
 */
export function joinHealth(a: ComponentHealth, b: ComponentHealth): ComponentHealth {
  const status = a.status === "DOWN" || b.status === "DOWN" ? "DOWN" : "UP";
  if (a.details === undefined && b.details === undefined) return { status };
  return { status, details: { ...a.details, ...b.details } };
}

/**
 * The app's health from its components': DOWN when any component is DOWN, else UP (an app
 * without indicators is UP). The components are shown only with `always`: with `never` the body
 * holds the status alone, so that neither a component's name nor its error reaches a client.
 */
export function aggregateHealth(
  components: ReadonlyMap<string, ComponentHealth>,
  showDetails: ShowDetails,
): HealthAnswer {
  let status: HealthStatus = "UP";
  for (const component of components.values()) if (component.status === "DOWN") status = "DOWN";
  const answer = statusAnswer(status);
  if (showDetails !== "always" || components.size === 0) return answer;
  const sorted = [...components].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // `fromEntries` defines each name as an own key, `__proto__` included.
  const shown = Object.fromEntries(sorted.map(([name, { status, details }]) => {
    return [name, details === undefined ? { status } : { status, details }];
  }));
  return { httpStatus: answer.httpStatus, body: { status, components: shown } };
}
