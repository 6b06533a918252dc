import type { Message } from '@kode/protocol'
import { AgentError } from '../errors.js'

/** What a host's summariser gets (see {@link CompactionOptions.summarize}). */
export interface SummarizeInput {
  /** The summarised messages as a transcript: thinking left out, images replaced by a note, long text cut. */
  transcript: string
  /** The summary of the compaction before this one, which the new summary must fold in. */
  previousSummary: string | undefined
  /** The summarised messages themselves, oldest first. */
  messages: readonly Message[]
  /** The engine's own summary instructions (`COMPACTION_PROMPT`). */
  prompt: string
  /** Aborts when the user interrupts the task (or `agent.compact`). */
  signal: AbortSignal
}

/** Writes the summary that replaces the older part of a session, at once or as a promise. */
export type Summarizer = (input: SummarizeInput) => string | Promise<string>

/** `createAgent({ compaction })`: when and how a long session is compacted. */
export interface CompactionOptions {
  /**
   * Compact before a model call whose estimated input passes this fraction of the usable window
   * (the context window minus the output reserve). Between 0 and 1; default 0.8. When the system
   * prompt and tool definitions, which no compaction shrinks, leave the history less than a quarter
   * of what they leave of the window, the point moves up to give it that quarter, so that long
   * tool definitions do not make every turn compact.
   */
  threshold?: number | undefined
  /**
   * Turns (a response and its tool results) kept verbatim after the summary; fewer when they do
   * not fit in 40% of the usable window (or in half of what the threshold leaves besides the
   * system prompt and tool definitions). Default 4; 0 summarises everything but the task's new input
   * and a response whose calls still wait for results (approval), which are always kept.
   */
  keepRecent?: number | undefined
  /**
   * Writes the summary instead of the agent's model (a cheaper model, a fixed text in tests).
   * Default: a request to the agent's client with `COMPACTION_PROMPT`, whose usage and cost are
   * counted in the task's accounting and on the `compaction` record. A summary larger than what the
   * system prompt and tool definitions leave of the window is not saved (the compaction fails).
   */
  summarize?: Summarizer | undefined
}

/** Compaction settings with defaults filled in. */
export interface CompactionSettings {
  threshold: number
  keepRecent: number
  summarize: Summarizer | undefined
}

/** Defaults of {@link CompactionOptions}. */
export const COMPACTION_DEFAULTS = Object.freeze({ threshold: 0.8, keepRecent: 4 })

/**
 * Checks the options and fills in defaults; `false` turns compaction off (a context-overflow error
 * then ends the task). Throws `AgentError` (`invalid_options`).
 */
export function resolveCompaction(
  options: CompactionOptions | false | undefined,
): CompactionSettings | undefined {
  if (options === false) return undefined
  // Options from JavaScript or a config file: a wrong type is refused here, not coerced or called
  // in the middle of a long session.
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw invalid(`compaction must be an object of options or false (got ${shown(options)})`)
  const threshold = options?.threshold ?? COMPACTION_DEFAULTS.threshold
  if (!(typeof threshold === 'number' && threshold > 0 && threshold <= 1))
    throw invalid(`compaction.threshold must be in (0, 1] (got ${shown(threshold)})`)
  const keepRecent = options?.keepRecent ?? COMPACTION_DEFAULTS.keepRecent
  if (!(Number.isInteger(keepRecent) && keepRecent >= 0))
    throw invalid(`compaction.keepRecent must be a whole number >= 0 (got ${shown(keepRecent)})`)
  const summarize = options?.summarize
  if (summarize !== undefined && typeof summarize !== 'function')
    throw invalid(`compaction.summarize must be a function (got ${shown(summarize)})`)
  return { threshold, keepRecent, summarize }
}

function invalid(message: string): AgentError {
  return new AgentError('invalid_options', message)
}

/** A refused value as the message shows it: a string quoted, so that `"0.5"` does not read as 0.5. */
function shown(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value)
}
