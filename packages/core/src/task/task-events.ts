import type { Event, EventOf, EventType } from '@kode/protocol'
import { thrownText } from '../thrown-text.js'

/** Where a task's events go: the run's queue and the agent's emitter. Never throws. */
export type EventSink = (event: Event) => void

/** An event's own fields: everything but `type`, `sessionId` and `timestamp`, which are stamped. */
export type EventFields<T extends EventType> = Omit<EventOf<T>, 'type' | 'sessionId' | 'timestamp'>

/**
 * The events of one task in one session: stamps each event with the session id and the clock, and
 * tracks what the sequence has open (streams, the turn, the task, tool calls without results) so
 * the engine closes exactly what is open, and a task that fails can still end its sequence cleanly.
 */
export class TaskEvents {
  readonly sessionId: string
  thinkingOpen = false
  textOpen = false
  turnOpen = false
  taskOpen = false
  readonly #now: () => number
  readonly #sink: EventSink
  /** The open compaction's `compaction_start`, until its `compaction_end`. */
  #compaction: EventOf<'compaction_start'> | undefined
  /** Tool calls announced by `tool_call` and not yet answered by `tool_result`. */
  readonly #pendingCalls = new Map<string, EventOf<'tool_call'>>()

  constructor(sessionId: string, now: () => number, sink: EventSink) {
    this.sessionId = sessionId
    this.#now = now
    this.#sink = sink
  }

  emit<T extends EventType>(type: T, fields: EventFields<T>): void {
    const event = { type, sessionId: this.sessionId, timestamp: this.#now(), ...fields } as Event
    this.#track(event)
    this.#sink(event)
  }

  /**
   * Emits an event of another session, which could not emit it itself (a sub-agent whose session
   * is gone): it opens or closes nothing of this task's.
   */
  emitFor<T extends EventType>(sessionId: string, type: T, fields: EventFields<T>): void {
    this.#sink({ type, sessionId, timestamp: this.#now(), ...fields } as Event)
  }

  /** The hot path, once per streamed delta: built as one literal, and deltas open or close nothing. */
  delta(
    type: 'thinking_delta' | 'assistant_text_delta',
    responseId: string | undefined,
    content: string,
  ): void {
    this.#sink({ type, sessionId: this.sessionId, timestamp: this.#now(), responseId, content })
  }

  /**
   * Goes on with a turn a process that died had opened, and the calls it had announced: nothing
   * is emitted, but they count as open, so the task closes them (and `abandon` answers them).
   */
  resumeTurn(calls: readonly EventFields<'tool_call'>[]): void {
    this.turnOpen = true
    const timestamp = this.#now()
    for (const call of calls) {
      this.#pendingCalls.set(call.toolCallId, {
        type: 'tool_call',
        sessionId: this.sessionId,
        timestamp,
        ...call,
      })
    }
  }

  /** Ends the open thinking or text stream, if any (they never overlap). */
  closeStreams(responseId: string | undefined): void {
    if (this.thinkingOpen) this.emit('thinking_end', { responseId })
    if (this.textOpen) this.emit('assistant_text_end', { responseId })
  }

  /**
   * Ends the sequence of a task that failed with an exception (a store write failed, a bug): no
   * record is persisted any more, but open streams and an open compaction close (`compacted: false`),
   * announced tool calls get an `error`
   * result, and `error`, `turn_end` and `task_finish` (reason `error`) follow, so every consumer
   * sees a well-formed sequence before the run throws.
   */
  abandon(error: unknown): void {
    // A host's store may fail with anything (an object without a prototype, an error whose
    // `message` getter throws): the sequence must still end.
    const message = thrownText(error, (kind) => `the task failed with ${kind} that cannot be shown as text`)
    this.closeStreams(undefined)
    const compaction = this.#compaction
    if (compaction) {
      const { reason, tokensBefore } = compaction
      this.emit('compaction_end', { reason, compacted: false, tokensBefore, errorMessage: message })
    }
    for (const call of [...this.#pendingCalls.values()]) {
      this.emit('tool_result', {
        responseId: call.responseId,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        result: `The task failed before this tool call finished: ${message}`,
        status: 'error',
        isLastInTurn: false,
      })
    }
    if (!this.taskOpen) return
    this.emit('error', { errorMessage: message, canRetry: false })
    if (this.turnOpen) this.emit('turn_end', {})
    this.emit('task_finish', { taskResult: '', hasStructuredOutput: false, reason: 'error' })
  }

  #track(event: Event): void {
    switch (event.type) {
      case 'thinking_start':
        this.thinkingOpen = true
        return
      case 'thinking_end':
        this.thinkingOpen = false
        return
      case 'assistant_text_start':
        this.textOpen = true
        return
      case 'assistant_text_end':
        this.textOpen = false
        return
      case 'turn_start':
        this.turnOpen = true
        return
      case 'turn_end':
        this.turnOpen = false
        return
      case 'task_start':
        this.taskOpen = true
        return
      case 'task_finish':
        this.taskOpen = false
        return
      case 'tool_call':
        this.#pendingCalls.set(event.toolCallId, event)
        return
      case 'compaction_start':
        this.#compaction = event
        return
      case 'compaction_end':
        this.#compaction = undefined
        return
      case 'tool_result':
        this.#pendingCalls.delete(event.toolCallId)
        return
      default:
        return
    }
  }
}
