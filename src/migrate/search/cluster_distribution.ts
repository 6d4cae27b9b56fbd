import { MigrationFailure } from "../migration_error.ts";
import { definedFields } from "../../defined_fields.ts";
import { type Distribution, distributionOf } from "./distribution.ts";
import { type SearchClient, SearchTransportError } from "./http/search_client.ts";
import type { SearchFile } from "./search_file.ts";

/**
 * What the cluster is, read from `GET /` for `file` (a reindex). A refused read stops the file
 * before its first step: taken for OpenSearch, an Elasticsearch would refuse the swap's timeout
 * only after the copy, with writes blocked.
 */
export function readDistribution(
  client: SearchClient,
  connection: string,
  file: SearchFile,
): Promise<Distribution> {
  const failed = (reason: string, status?: number, cause?: unknown) =>
    new MigrationFailure({
      connection,
      file: file.path,
      request: "GET /",
      ...definedFields({ status }),
      reason: `reindex not started: ${reason}; the runner reads GET / to tell OpenSearch ` +
        "from Elasticsearch, whose parameters differ",
    }, { cause });
  return client.send("GET", "/").then((root) => {
    if (root.status === 200) return distributionOf(root.body);
    throw failed(
      root.status === 401 || root.status === 403
        ? "the connection's user may not read it: grant it cluster:monitor/main (in the " +
          "monitor privileges)"
        : "the cluster answered no version",
      root.status,
    );
  }, (error: unknown) => {
    if (!(error instanceof SearchTransportError)) throw error;
    throw failed(error.message, undefined, error);
  });
}
