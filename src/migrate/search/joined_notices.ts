/** `notices` joined as one `notice` field, none when there is none. */
export function noticeOf(notices: readonly string[]): { notice?: string } {
  const notice = joinNotices(notices);
  return notice === undefined ? {} : { notice };
}

/** One notice of several, each said once. */
export function joinNotices(notices: readonly (string | undefined)[]): string | undefined {
  const said = [...new Set(notices.filter((n): n is string => n !== undefined))];
  return said.length === 0 ? undefined : said.join("; ");
}
