// How a bean of Thaw's own (the Redis cache manager, the SQL lock provider) offers a health
// component without the actuator: a method under a symbol, which only the actuator calls. The
// class imports this file and nothing of the actuator, so an app without it carries no check.

/** A component a bean offers: Spring Boot's name for it, and its check. */
export interface HealthContribution {
  /** The component's name: `redis`, `db`. */
  readonly name: string;
  /**
   * Whether the check's details go under the bean's name (`{ "lockProvider": { ... } }`), as the
   * datasources' do in `db`, rather than as they are (`{ "version": "7.2.4" }`).
   */
  readonly keyed: boolean;
  /** Resolves the details of UP; rejects with the reason of DOWN. */
  check(): Promise<{ readonly [key: string]: unknown }>;
}

/** The method of a bean that offers a {@linkcode HealthContribution}. */
export const HEALTH_CONTRIBUTION: unique symbol = Symbol("thaw.health-contribution");

/** What a bean that offers a health component has. */
export interface HealthContributor {
  [HEALTH_CONTRIBUTION](): HealthContribution;
}
