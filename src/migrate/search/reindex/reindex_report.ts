import type { ReindexReport } from "../../run_report.ts";
import { definedFields } from "../../../defined_fields.ts";

/** What the report says of a reindex whatever it did. */
export interface ReindexSummary {
  readonly source: string;
  readonly index: string;
  readonly alias: string;
  readonly resumed: boolean;
}

/** The figures a run gathers for its report, as its steps give them. */
export interface ReportFigures {
  /** The first copy's documents and run time: by copy, else by the last catch-up. */
  readonly firstCopy?: { readonly documents: number; readonly ms: number };
  /** The new index's document count once it matched the source's: by verify. */
  readonly documents?: number;
  /** How long writes to the source were blocked: by unblock. */
  readonly writeBlockedMs?: number;
  /** By delete-source. */
  readonly deletedSource: boolean;
}

/** The figures of a run that did nothing yet. */
export const NO_FIGURES: ReportFigures = { deletedSource: false };

/** The report of a reindex: what it was, and the figures its run gathered. */
export function reindexReport(summary: ReindexSummary, figures: ReportFigures): ReindexReport {
  const { firstCopy: copy, documents, writeBlockedMs } = figures;
  return {
    ...summary,
    deletedSource: figures.deletedSource,
    ...definedFields({ documents }),
    ...(copy === undefined ? {} : {
      copyMs: copy.ms,
      documentsPerSecond: copy.ms > 0 ? Math.round(copy.documents / (copy.ms / 1000)) : 0,
    }),
    ...definedFields({ writeBlockedMs }),
  };
}
