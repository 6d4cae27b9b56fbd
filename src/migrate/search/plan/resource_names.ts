/**
 * The rules OpenSearch applies to the names a migration file gives: each function returns why the
 * cluster would refuse a name (to finish "... must ..."), or `undefined` when it takes it. They
 * let the planner refuse a file before anything is sent, instead of failing at apply after
 * earlier files were applied. tests/migrate/search/plan/plan_names_test.ts checks them on a real node.
 */

const utf8Length = (s: string): number => new TextEncoder().encode(s).length;

// A name that is a dot segment would change the request's path, whatever the API.
function pathSegmentProblem(name: string): string | undefined {
  if (name === "") return "must not be empty";
  if (name === "." || name === "..") return `must not be "${name}"`;
  return undefined;
}

function forbidden(name: string, characters: string): string | undefined {
  for (const c of characters) {
    if (name.includes(c)) return c === " " ? "must not contain a space" : `must not contain "${c}"`;
  }
  return undefined;
}

/**
 * OpenSearch's index name rule (MetadataCreateIndexService): lower case, none of
 * `\ / * ? " < > | , # :` or a space, not starting with `_`, `-` or `+`, at most 255 bytes.
 */
export function indexNameProblem(name: string): string | undefined {
  return pathSegmentProblem(name) ??
    (name !== name.toLowerCase() ? "must be lower case" : undefined) ??
    forbidden(name, '\\/*?"<>| ,#:') ??
    (/^[_\-+]/.test(name) ? `must not start with "${name[0]}"` : undefined) ??
    (utf8Length(name) > 255 ? `is ${utf8Length(name)} bytes; at most 255` : undefined);
}

/**
 * OpenSearch's composable index template name rule (MetadataIndexTemplateService.validate, as the
 * 2.19 node answers): lower case, no space, `,`, `#` or `*`, not starting with `_`.
 */
export function templateNameProblem(name: string): string | undefined {
  return pathSegmentProblem(name) ??
    (name !== name.toLowerCase() ? "must be lower case" : undefined) ??
    forbidden(name, " ,#*") ??
    (name.startsWith("_") ? 'must not start with "_"' : undefined);
}

/**
 * ISM policy ids: the plugin stores a policy as a document of its config index with the policy id
 * as the document id and checks nothing else, so the one rule is a document id's 512 bytes. Case
 * and spaces are kept: an index's `plugins.index_state_management.policy_id` refers to the id.
 */
export function policyIdProblem(id: string): string | undefined {
  return pathSegmentProblem(id) ??
    (utf8Length(id) > 512 ? `is ${utf8Length(id)} bytes; at most 512` : undefined);
}
