import type { Event, ReplayEvent } from '@kode/protocol'
import type { ParentCall, SubAgentLinks } from './sub-agent-links.js'

/** One event as it goes out on the wire: its SSE id and its JSON, serialized once. */
export interface SentEvent {
  readonly id: string
  readonly data: string
}

/** Where a reconnecting client resumes: after an event of this log, or from the start. */
export type Resume = { from: number; reset: false } | { from: 0; reset: true }

/**
 * The events a session's stream has sent since its last task started: the replay of the history
 * the task started from, then the task's events as they came. Ids are `<generation>-<index>`;
 * the generation changes when a new task (or a fresh load from the store) starts a new log, so
 * an id names exactly one event for as long as the server holds the session.
 */
export class EventLog {
  readonly generation: string
  readonly #events: SentEvent[] = []
  /**
   * The call that started each sub-agent the log's replayed events show: a replay carries no
   * `task_start` to say it, so the stream sends these beside the events (a `sub-agents` frame).
   */
  readonly links: Map<string, ParentCall>

  constructor(generation: string, replay: readonly ReplayEvent[], links: SubAgentLinks = new Map()) {
    this.generation = generation
    this.links = new Map(links)
    for (const event of replay) this.push(event)
  }

  get length(): number {
    return this.#events.length
  }

  /** Appends an event and returns it as sent. */
  push(event: Event | ReplayEvent): SentEvent {
    const sent = { id: `${this.generation}-${this.#events.length}`, data: JSON.stringify(event) }
    this.#events.push(sent)
    return sent
  }

  /** The events from index `from` on. */
  since(from: number): readonly SentEvent[] {
    return this.#events.slice(from)
  }

  /**
   * Where a client that last saw `lastEventId` resumes. An id of this log resumes right after
   * it. Anything else (an id of an older log, of another server, or garbage) cannot be placed,
   * so the client is told to reset and gets the whole log: that loses and duplicates nothing.
   */
  resume(lastEventId: string | undefined): Resume {
    if (lastEventId === undefined || lastEventId === '') return { from: 0, reset: false }
    const match = /^(.+)-(\d+)$/.exec(lastEventId)
    if (match && match[1] === this.generation) {
      const index = Number(match[2])
      if (index < this.#events.length) return { from: index + 1, reset: false }
    }
    return { from: 0, reset: true }
  }
}
