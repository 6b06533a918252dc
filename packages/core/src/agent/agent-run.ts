import type { Event } from '@kode/protocol'
import type { TaskOutcome } from '../outcome.js'
import { EventQueue } from './event-queue.js'
import { alreadyIterated } from './misuse.js'

/**
 * One task in progress: an async iterable of its events (sub-agents' included) and a promise of
 * how it ended. Iterate it once: a second iteration throws `AgentError` (`already_iterated`), since
 * the two consumers would split the events between them. Leaving the loop early (`break`,
 * `return`, a throw) interrupts the task and waits until it has persisted cleanly.
 */
export interface AgentRun<O = unknown> extends AsyncIterable<Event> {
  /** The session the task runs in. */
  readonly sessionId: string
  /**
   * Resolves when the task has ended and everything is persisted, also for provider failures and
   * interrupts (see `TaskOutcome.reason`). Rejects only with what the host must handle: a session
   * store failure, a throwing event listener, a bug in a custom client.
   */
  readonly done: Promise<TaskOutcome<O>>
}

/** The engine's side of a run. */
export class RunChannel implements AgentRun {
  readonly sessionId: string
  readonly done: Promise<TaskOutcome>
  readonly #queue = new EventQueue<Event>()
  readonly #interrupt: () => void
  #resolve!: (outcome: TaskOutcome) => void
  #reject!: (error: unknown) => void
  #iterated = false

  constructor(sessionId: string, interrupt: () => void) {
    this.sessionId = sessionId
    this.#interrupt = interrupt
    this.done = new Promise<TaskOutcome>((resolve, reject) => {
      this.#resolve = resolve
      this.#reject = reject
    })
    // A host that only listens to the emitter need not await `done`; a failure must not go unhandled.
    this.done.catch(() => undefined)
  }

  /** Interrupts the task, as the user would (`agent.close()` uses it). */
  interrupt(): void {
    this.#interrupt()
  }

  push(event: Event): void {
    this.#queue.push(event)
  }

  finish(outcome: TaskOutcome): void {
    this.#queue.end()
    this.#resolve(outcome)
  }

  fail(error: unknown): void {
    this.#queue.fail(error)
    this.#reject(error)
  }

  [Symbol.asyncIterator](): AsyncIterator<Event, undefined> {
    if (this.#iterated) {
      throw alreadyIterated(this.sessionId)
    }
    this.#iterated = true
    const queue = this.#queue
    return {
      next: () => queue.next(),
      return: async () => {
        queue.close()
        this.#interrupt()
        await this.done
        return { done: true, value: undefined }
      },
    }
  }
}
