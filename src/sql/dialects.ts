// Each database's dialect by its kind: looked up once per client, pool or transaction, never
// per statement.
import type { Isolation } from "./isolation.ts";
import { MYSQL } from "./mysql_dialect.ts";
import { POSTGRES } from "./postgres_dialect.ts";
import type { DatabaseKind, SqlDialect } from "./sql_dialect.ts";
import { SQLITE } from "./sqlite_dialect.ts";

/** The dialect of each kind of database. */
export const DIALECTS: Readonly<Record<DatabaseKind, SqlDialect>> = {
  postgres: POSTGRES,
  mysql: MYSQL,
  sqlite: SQLITE,
};

/**
 * Refuses, with a `TypeError` naming `where` and the datasource, an isolation level its database
 * lacks (as Spring does): on SQLite, any but `SERIALIZABLE` and `DEFAULT`.
 */
export function checkIsolation(
  datasource: { readonly kind: DatabaseKind; readonly name: string },
  isolation: Isolation | undefined,
  where: string,
): void {
  const dialect = DIALECTS[datasource.kind];
  const lacks = isolation === undefined ? undefined : dialect.lacks(isolation);
  if (lacks === undefined) return;
  throw new TypeError(
    `${where}: isolation ${isolation} is not one datasource "${datasource.name}" (${dialect.name}) ` +
      `has: ${lacks}`,
  );
}
