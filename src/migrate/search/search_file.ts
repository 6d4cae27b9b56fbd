import type { CodeFile } from "../code/code_file.ts";
import type { PlannedFile } from "../plan/planned_file.ts";
import type { SearchRequest } from "./plan/search_request.ts";

/** A planned search migration file: the request it becomes. */
export interface SearchFile extends PlannedFile {
  readonly request: string;
  readonly searchRequest: SearchRequest;
}

/** What a search connection's migration files become: a request, or code. */
export type SearchPlannedFile = SearchFile | CodeFile;
