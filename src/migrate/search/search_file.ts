import type { PlannedFile } from "../plan/planned_file.ts";
import type { SearchRequest } from "./plan/search_request.ts";

/** A planned search migration file: the request it becomes. */
export interface SearchFile extends PlannedFile {
  readonly request: string;
  readonly searchRequest: SearchRequest;
}
