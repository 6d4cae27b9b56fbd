// What one timer can wait, apart from the duration parser: a module that bounds a wait by it must
// not carry the parser into a worker that reads no duration.

/** The longest duration Thaw takes: about 24.8 days, what one timer can wait. */
export const MAX_DURATION_MS: number = 2_147_483_647;
