import { ProviderView } from '@kode/session'
import { type FormatterInstructions, formatForProvider, type HistoryFormatter } from './history-formatter.js'

/**
 * The provider view the engine keeps for a session: `update(history)` returns the messages of the
 * next request as `formatter` presents them for requests carrying `instructions` (what
 * `formatter.instructions(tools)` returned for the agent's tools; default `{}`, requests that
 * offer no native tools). It works incrementally (seed 004): each message is formatted once, when
 * it first enters the view, and kept, so a turn formats only what is new. The view's rules (a call
 * without a result gets a placeholder result, ...) apply before the formatter sees the messages;
 * see `ProviderView` in `@kode/session`.
 */
export function createProviderView(
  formatter: HistoryFormatter,
  instructions: FormatterInstructions = {},
): ProviderView {
  return new ProviderView({ format: (message) => formatForProvider(formatter, message, instructions) })
}
