/**
 * Thaw's command line. The migration runners (search and SQL) are not built yet; until they are,
 * this prints the usage they will have and exits with 2 (usage error).
 *
 * @module
 */
import process from "node:process";

const USAGE = `Usage: deno run -A cli.ts [-m search|sql] -c <config_dir> --sqlPath <migrations_root>

Applies versioned migration files to the connections configured in <config_dir>/application.yml.
  -m search     JSON migrations on OpenSearch connections (alias: -m opensearch)
  -m sql        SQL migrations (the default)

Not implemented yet in this version: the runners arrive with the migration issues.`;

if (import.meta.main) {
  const help = process.argv.includes("--help") || process.argv.includes("-h");
  (help ? console.log : console.error)(USAGE);
  process.exit(help ? 0 : 2);
}
