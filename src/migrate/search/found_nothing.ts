import { isJsonObject } from "../files/json_object.ts";
import type { SearchResponse } from "./http/search_client.ts";

/**
 * Whether `response` is the cluster's own "not found": a 404 with OpenSearch's (or
 * Elasticsearch's) error body (`{"error": {"type": "index_not_found_exception", …}, "status":
 * 404}`), a document's `"result": "not_found"`, or the security plugin's `"status": "NOT_FOUND"`.
 * A 404 in any other form (a proxy's HTML page, a gateway's `{"message": "Not Found"}`) says
 * nothing of what the cluster holds: the request may never have reached it.
 */
export function clusterFoundNothing(response: SearchResponse): boolean {
  const body = response.body;
  if (response.status !== 404 || !isJsonObject(body)) return false;
  if (body.result === "not_found" || body.status === "NOT_FOUND") return true;
  const error = body.error;
  return body.status === 404 && isJsonObject(error) && typeof error.type === "string";
}
