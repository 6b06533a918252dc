/** Half of a surrogate pair standing alone. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/**
 * `text` with each lone surrogate (half of an emoji, left by a tool that cut a string) replaced by
 * U+FFFD, as a UTF-8 encoder would. Such text has no UTF-8 form, and strict JSON parsers refuse a
 * request carrying its `\ud83d` escape: kept in the history, it would fail every later request of
 * the session.
 */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\ufffd')
}
