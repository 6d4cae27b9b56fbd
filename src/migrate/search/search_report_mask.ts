import { composeMasks, type Mask, maskUrls, placeholdersMask } from "../../config/secrets_mask.ts";
import type { SearchConnection } from "./search_connection.ts";

/**
 * What the report may show of a search connection's files and of the cluster's answers: its
 * placeholder values, URL passwords and the connection's own credentials (`credentials`: its
 * client's mask of them) masked.
 */
export function searchReportMask(connection: SearchConnection, credentials: Mask): Mask {
  // Drift quotes values of the files and of the cluster: a placeholder's may be a secret, a
  // URL's password is, and a host may echo the connection's own credentials in a success.
  return composeMasks(placeholdersMask(connection.placeholders), maskUrls, credentials);
}
