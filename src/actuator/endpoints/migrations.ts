// `migrations`: the state of each SQL and search migration file, from what the app handed in.
import type { ActuatorEndpoint } from "../actuator_endpoint.ts";
import { available, jsonAnswer } from "../actuator_endpoint.ts";
import { endpointRoute } from "../endpoint_route.ts";

/** The `migrations` endpoint, where the app passed `actuator({ migrations })`. */
export const migrationsEndpoint: ActuatorEndpoint<"migrations"> = {
  id: "migrations",
  unavailable: ({ migrations }) =>
    migrations === undefined
      ? "the migrations endpoint reads the records of a config folder: pass actuator({ " +
        "migrations: migrationStatus({ config, migrations }) }), import { migrationStatus } " +
        'from "@thaw/thaw/migrate"'
      : undefined,
  routes: ({ base, migrations: given, mask }) => {
    const migrations = available(given, "migrations", "actuator({ migrations })");
    return {
      routes: [
        // Each connection's failure is in the body; what fails as a whole (no configuration to
        // read) is a 503 naming why, its secrets masked, never the error path's 500.
        endpointRoute("GET", `${base}/migrations`, async () => {
          try {
            return jsonAnswer(JSON.stringify(await migrations()));
          } catch (error) {
            const message = mask(String((error as Error)?.message ?? error));
            return jsonAnswer(JSON.stringify({ error: message }), 503);
          }
        }),
      ],
    };
  },
};
