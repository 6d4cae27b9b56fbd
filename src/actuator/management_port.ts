// `management.server.port`: the actuator on a port of its own, and the address to bind it on.
import { ConfigError } from "../config/config_error.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { definedFields } from "../defined_fields.ts";

/** The actuator's own port and address, if the app asks for a port of its own. */
export function managementPort(
  settings: ThawSettings,
): { port: number; hostname?: string; where: string } | undefined {
  const port = settings.get("management.server.port");
  const address = settings.get("management.server.address");
  if (port === undefined) {
    if (address === undefined) return undefined;
    // The actuator would stay on the app's port, open on its address: not what the key asks.
    throw new ConfigError(
      `${settings.where("management.server.address")}: an address for the management port, ` +
        "which management.server.port gives: set it, or leave the address out",
    );
  }
  return {
    port,
    ...definedFields({ hostname: address }),
    where: settings.where("management.server.port"),
  };
}
