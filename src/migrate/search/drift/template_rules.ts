import { isJsonObject } from "../../files/json_object.ts";
import { aliasesForm } from "./alias_rules.ts";
import { settingsForm } from "./settings_rules.ts";

/**
 * Drift rules for composable templates (checked on an OpenSearch 2.19 node;
 * docs/migrations-reference.md, "Drift"): a template is compared whole, on what a PUT sets:
 * `index_patterns` (a string is a list of one), `template.settings` (flattened:
 * settings_rules.ts) / `mappings` / `aliases` (alias_rules.ts), `composed_of` (absent is `[]`),
 * `priority`, `version`, `_meta`, `data_stream` (`{}` gains `timestamp_field: {name:
 * "@timestamp"}`). Empty `template`, `settings`, `mappings` and `aliases` are dropped; a key the
 * cluster has that the file does not is a difference.
 */

const isEmptyObject = (v: unknown) => isJsonObject(v) && Object.keys(v).length === 0;

/**
 * A composable template as the cluster returns it (`GET /_index_template/{name}`, the
 * `index_template` of the entry): see the module's rules. Taking the cluster's own answer to this
 * form changes nothing that matters, so both sides go through it.
 */
export function templateForm(body: unknown): unknown {
  if (!isJsonObject(body)) return body;
  const entries: [string, unknown][] = [];
  for (const [key, value] of Object.entries(body)) {
    if (key === "index_patterns" && typeof value === "string") entries.push([key, [value]]);
    else if (key === "composed_of" && Array.isArray(value) && value.length === 0) continue;
    else if (
      key === "data_stream" && isJsonObject(value) && !Object.hasOwn(value, "timestamp_field")
    ) {
      entries.push([key, { ...value, timestamp_field: { name: "@timestamp" } }]);
    } else if (key === "template" && isJsonObject(value)) {
      const inner: [string, unknown][] = [];
      for (const [k, v] of Object.entries(value)) {
        const form = k === "settings" && isJsonObject(v)
          ? settingsForm(v)
          : k === "aliases"
          ? aliasesForm(v)
          : v;
        if (!((k === "settings" || k === "mappings" || k === "aliases") && isEmptyObject(form))) {
          inner.push([k, form]);
        }
      }
      if (inner.length > 0) entries.push([key, Object.fromEntries(inner)]);
    } else entries.push([key, value]);
  }
  return Object.fromEntries(entries);
}
