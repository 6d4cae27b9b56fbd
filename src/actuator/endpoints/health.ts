// `health`: `/actuator/health`, with its `liveness` and `readiness` groups, over the app's
// indicators, the components Thaw's own beans offer and the disk's.
import type { ActuatorEndpoint } from "../actuator_endpoint.ts";
import { contributedHealth } from "../builtin_health.ts";
import { indicatorBeans } from "../health_hooks.ts";
import { healthRoutes } from "../health_routes.ts";
import { healthSettings } from "../health_settings.ts";
import { shownValueMask } from "../shown_values.ts";

/** The `health` endpoint. */
export const healthEndpoint: ActuatorEndpoint<"health"> = {
  id: "health",
  routes: ({ base, beans, settings, health, disk, accepting, config, logger }) => {
    if (disk !== undefined && "leftOut" in disk) {
      (logger.warn ?? logger.error).call(logger, disk.leftOut);
    }
    const now = beans();
    return healthRoutes(
      [
        ...indicatorBeans(now),
        ...contributedHealth(now, settings),
        ...(disk !== undefined && "indicator" in disk ? [disk.indicator] : []),
      ],
      healthSettings(settings, health),
      accepting,
      shownValueMask(config),
      base,
    );
  },
};
