import type { AssistantMessage, StreamItem } from '@kode/protocol'
import type { TaskEvents } from './task-events.js'

/**
 * Turns one response's stream items into protocol events with explicit boundaries: a thinking or
 * text stream opens at its first delta, opening one closes the other (they never overlap), a tool
 * call start closes both first, and `done` closes whatever is open. Empty deltas are dropped.
 */
export class ResponseEvents {
  responseId: string | undefined
  readonly #events: TaskEvents

  constructor(events: TaskEvents) {
    this.#events = events
  }

  /** Emits the events of one item; returns the final message when the item is `done`. */
  push(item: StreamItem): AssistantMessage | undefined {
    const events = this.#events
    switch (item.type) {
      case 'thinking_delta': {
        if (item.text === '') return undefined
        const responseId = this.#id(item.responseId)
        if (events.textOpen) events.emit('assistant_text_end', { responseId })
        if (!events.thinkingOpen) events.emit('thinking_start', { responseId })
        events.delta('thinking_delta', responseId, item.text)
        return undefined
      }
      case 'text_delta': {
        if (item.text === '') return undefined
        const responseId = this.#id(item.responseId)
        if (events.thinkingOpen) events.emit('thinking_end', { responseId })
        if (!events.textOpen) events.emit('assistant_text_start', { responseId })
        events.delta('assistant_text_delta', responseId, item.text)
        return undefined
      }
      case 'image_delta': {
        const responseId = this.#id(item.responseId)
        const part = item.part
        if (part.type === 'image_file')
          events.emit('assistant_image_delta', { responseId, filePath: part.path })
        else events.emit('assistant_image_delta', { responseId, url: part.url })
        return undefined
      }
      case 'tool_call_start': {
        const responseId = this.#id(item.responseId)
        events.closeStreams(responseId)
        events.emit('tool_call_start', { responseId, toolCallId: item.toolCallId, toolName: item.toolName })
        return undefined
      }
      case 'done':
        this.#id(item.message.responseId)
        this.close()
        return item.message
      default: {
        // A newer provider's item type: nothing to show for it.
        const unknown: never = item
        void unknown
        return undefined
      }
    }
  }

  /** Closes open streams (at `done`, or when the response failed or was cut). */
  close(): void {
    this.#events.closeStreams(this.responseId)
  }

  #id(responseId: string | undefined): string | undefined {
    if (responseId !== undefined) this.responseId = responseId
    return this.responseId
  }
}
