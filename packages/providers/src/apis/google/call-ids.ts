import type { AssistantMessage, ToolCallPart, ToolResultMessage } from '@kode/protocol'
import type { ViewEntry } from '../shared/prepare-messages.js'

/**
 * The id Gemini gave a function call, if it gave one. It is kept apart from Kode's call id (which
 * is Gemini's id when there is one, else one Kode made up: see `createGoogleEventMapper`), in the
 * call's `google` provider fields, so that no made-up id is ever sent as Gemini's.
 */
export function googleCallId(part: ToolCallPart): string | undefined {
  if (part.providerFields?.format !== 'google') return undefined
  const id = part.providerFields.fields.id
  return typeof id === 'string' && id ? id : undefined
}

/**
 * The Gemini ids of the calls tool results answer, for one request's entries. A result's call is
 * in the nearest assistant entry before it; the entries are scanned from the end, and only as far
 * as a result asked about needs: results converted before are cached, so a turn usually asks
 * only about its newest ones, right after their assistant message.
 */
export class ResultCallIds {
  readonly #entries: readonly ViewEntry[]
  readonly #found = new Map<ToolResultMessage, string | undefined>()
  /** Results seen in the scan whose assistant entry is not reached yet. */
  #pending: ToolResultMessage[] = []
  #next: number

  constructor(entries: readonly ViewEntry[]) {
    this.#entries = entries
    this.#next = entries.length
  }

  /** The Gemini id of the call `result` answers; `undefined` when that call had none. */
  of(result: ToolResultMessage): string | undefined {
    while (!this.#found.has(result) && this.#next > 0) {
      const entry = this.#entries[--this.#next]!
      if (entry.role === 'tool') this.#pending.push(entry.message)
      else if (entry.role === 'assistant') this.#settle(entry.message)
    }
    return this.#found.get(result)
  }

  #settle(message: AssistantMessage): void {
    if (this.#pending.length === 0) return
    const ids = new Map<string, string | undefined>()
    for (const part of message.parts) if (part.type === 'tool_call') ids.set(part.id, googleCallId(part))
    for (const result of this.#pending) this.#found.set(result, ids.get(result.toolCallId))
    this.#pending = []
  }
}
