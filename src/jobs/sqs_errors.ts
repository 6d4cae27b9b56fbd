// What SQS's errors mean to the job store, by the names the SDK gives them (SQS's JSON protocol
// and its older query protocol name some differently; ElasticMQ answers with either).

/** A receipt handle that no longer holds its message: its window ended, another may have it. */
export class StaleHandle extends Error {}

function errorName(error: unknown): string {
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === "string" ? name : "";
}

/** The queue does not exist. */
export function isMissingQueue(error: unknown): boolean {
  return /QueueDoesNotExist|NonExistentQueue/.test(errorName(error));
}

/** The role may not make the call. */
export function isAccessDenied(error: unknown): boolean {
  return /AccessDenied/.test(errorName(error));
}

/** SQS refused the message itself (its size, its attributes): sending it again changes nothing. */
export function isRefusedMessage(error: unknown): boolean {
  return /InvalidParameterValue|InvalidMessageContents|InvalidAttributeValue/.test(
    errorName(error),
  );
}

/** The receipt handle of a delete or a visibility change no longer holds its message. */
export function isStaleHandle(error: unknown): boolean {
  const name = errorName(error);
  const message = String((error as { message?: unknown } | null)?.message ?? "");
  return /ReceiptHandleIsInvalid|MessageNotInflight/.test(name) ||
    (/InvalidParameterValue/.test(name) && /receipt handle/i.test(message));
}
