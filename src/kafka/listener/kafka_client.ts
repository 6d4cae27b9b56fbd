// What the listener container takes from `@platformatic/kafka`: given by the caller (the `kafka()`
// feature loads the package through the optional-package loader; tests import it), so that
// nothing here loads it.
import type { ConnectionPool, Consumer, kGetApi, kGetConnection } from "@platformatic/kafka";

/** The parts of `@platformatic/kafka` the listeners use: `import("@platformatic/kafka")` fits. */
export interface KafkaClientModule {
  readonly Consumer: typeof Consumer;
  readonly ConnectionPool: typeof ConnectionPool;
  readonly kGetApi: typeof kGetApi;
  readonly kGetConnection: typeof kGetConnection;
}

/** The options every client takes: brokers, client id, TLS, SASL, timeouts. */
export type KafkaClientOptions = ConstructorParameters<typeof ConnectionPool>[1] & {
  readonly clientId: string;
  readonly bootstrapBrokers: string[];
};
