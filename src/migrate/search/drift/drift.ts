import { isJsonObject } from "../../files/json_object.ts";
import { type Mask, noMask } from "../../../config/secrets_mask.ts";
import { type Difference, Differences, diffJson } from "./json_diff.ts";
import { diffIndexAliases, diffWriteAlias } from "./alias_rules.ts";
import { diffMappings } from "./mapping_rules.ts";
import { POLICY_RULES, policyForms } from "./policy_rules.ts";
import { diffIndexSettings } from "./settings_rules.ts";
import { templateForm } from "./template_rules.ts";

/**
 * Drift: how a live template, policy, index or alias differs from the file that defines it. Pure
 * (no I/O): each `compare*` function takes what the file sends (placeholders replaced) and what
 * the cluster answers to a GET, brings both to one form, the cluster's, and lists the differences.
 * This module only composes; each part has its own (docs/migrations-reference.md, "Drift"):
 * - json_diff.ts: the generic diff, resource-agnostic: paths, values, "in the file, not in the
 *   cluster", scalars equal by their text (the cluster answers `10` to `"10"` in a mapping, `7` to
 *   a template's `"priority": "7"`, `false` to `"false"`), the bound on the list.
 * - template_rules.ts: a template is compared whole, on what a PUT sets, in the cluster's form.
 * - settings_rules.ts: settings flattened to `index.`-prefixed dotted keys, values as text; an
 *   index's static settings.
 * - mapping_rules.ts: an index's mappings: the keys the cluster adds, the defaults it leaves out,
 *   the fields a re-apply cannot remove or retype.
 * - alias_rules.ts: `routing`, the aliases an index file names, a reindex file's write alias.
 * - policy_rules.ts: a policy is compared on what its file sets; what ISM adds is not compared.
 */

/**
 * How a live composable template differs from the body its file sends (`index_template` of
 * `GET /_index_template/{name}`). Compared whole: a key either side lacks is a difference.
 */
export function compareTemplate(
  file: unknown,
  cluster: unknown,
  redact: Mask = noMask,
): Difference[] {
  return diffJson(templateForm(file), templateForm(cluster), { redact });
}

/** What an index file (or a reindex file's new index) declares, amendments merged in. */
export interface IndexDefinition {
  readonly settings?: unknown;
  readonly mappings?: unknown;
  readonly aliases?: unknown;
}

/** The parts of `GET /{index}` that are compared. */
export interface LiveIndex {
  readonly settings?: unknown;
  readonly mappings?: unknown;
  readonly aliases?: unknown;
  /** Aliases the file names that the index lacks but other indices hold (after a rollover). */
  readonly movedAliases?: Readonly<Record<string, readonly string[]>>;
}

/**
 * How a live index differs from what its file declares: the settings the file sets (each compared
 * with the live one), the mappings (a field the file does not declare is a difference, another
 * key the cluster adds is not), and the aliases the file names. A part the file does not declare
 * is not compared.
 */
export function compareIndex(
  file: IndexDefinition,
  cluster: LiveIndex,
  redact: Mask = noMask,
): Difference[] {
  const out = new Differences(redact);
  if (file.settings !== undefined) diffIndexSettings(file.settings, cluster.settings, out);
  if (file.mappings !== undefined) diffMappings(file.mappings, cluster.mappings, out);
  if (isJsonObject(file.aliases)) {
    diffIndexAliases(file.aliases, cluster.aliases, cluster.movedAliases, out);
  }
  return out.done();
}

/**
 * How a live ISM policy differs from its file's body (`{"policy": {...}}`; the live one is the
 * answer to `GET /_plugins/_ism/policies/{id}`), under `policy.`: what the file sets must be in
 * the cluster as set; what ISM adds is not compared.
 */
export function comparePolicy(
  file: unknown,
  cluster: unknown,
  redact: Mask = noMask,
): Difference[] {
  const [filePolicy, livePolicy] = policyForms(file, cluster);
  return diffJson(filePolicy, livePolicy, { at: { key: "policy" }, rules: POLICY_RULES, redact });
}

/**
 * Whether `alias` points at `index` as its write index (a reindex file's end state), from
 * `GET /_alias/{alias}` (`undefined`: the cluster has no such alias).
 */
export function compareWriteAlias(
  alias: string,
  index: string,
  cluster: unknown,
  redact: Mask = noMask,
): Difference[] {
  const out = new Differences(redact);
  diffWriteAlias(alias, index, cluster, out);
  return out.done();
}
