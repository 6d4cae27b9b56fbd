// The logging feature's setup, before the beans are made: the levels of `logging.level`, the
// writer of `logging.structured.format.console`, Thaw's own lines routed through them, the access
// log (`logging.access.enabled`), and the beans an app asks for (`LoggingSystem`, `Log`).
import { configSecrets } from "../config/application_config.ts";
import { ConfigError } from "../config/config_error.ts";
import { isMapping } from "../object_guards.ts";
import { composeMasks, maskUrls, secretsMask } from "../config/secrets_mask.ts";
import type { FeatureSetup } from "../feature_value.ts";
import { accessLog } from "./access_log_feature.ts";
import { configuredLevels } from "./configured_levels.ts";
import { LevelTable } from "./level_table.ts";
import { Log } from "./log.ts";
import { LogWriter } from "./log_writer.ts";
import { LoggingSystem, ROOT_LOGGER } from "./logging_system.ts";
import { routeThawLines } from "./thaw_lines.ts";

/** The setup of `logging()`. */
export const loggingSetup: FeatureSetup = (settings, { config, context, logger }) => {
  const structured = settings.get("logging.structured");
  if (structured !== undefined && structured !== null && !isMapping(structured)) {
    // Read by no one: `logging.structured: ecs` would leave the lines plain without a word.
    return Promise.reject(
      new ConfigError(
        `${
          settings.where("logging.structured")
        } must be a mapping: format: console: ecs or logstash`,
      ),
    );
  }
  const levels = new LevelTable(
    configuredLevels(settings.get("logging.level"), settings.where),
  );
  // As every message of Thaw's: no secret of the configuration, no URL's credentials.
  const mask = composeMasks(maskUrls, secretsMask(configSecrets(config)));
  const writer = new LogWriter(
    { ...logger },
    levels,
    settings.get("logging.structured.format.console"),
    mask,
  );
  routeThawLines(logger, writer);
  context.registerBean({
    name: "loggingSystem",
    type: LoggingSystem,
    source: "logging() of @thaw/thaw/logging",
    create: () => Promise.resolve(levels),
  });
  context.registerBean({
    name: "rootLog",
    type: Log,
    source: "logging() of @thaw/thaw/logging",
    create: () => Promise.resolve(new Log(ROOT_LOGGER, writer)),
  });
  return Promise.resolve(accessLog(settings, context, writer) ?? (() => undefined));
};
