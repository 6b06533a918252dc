import { type Agent, createAgent, type Tool } from '@kode/core'
import type { HistoryEvent } from '@kode/protocol'
import type { LLMClient } from '@kode/providers'
import { deriveReplayEvents, loadSubSessions, SessionError, type SessionStore } from '@kode/session'
import { EventLog, type Resume, type SentEvent } from './event-log.js'

/** What a task runs with; the hub creates one agent per session from it. */
export interface AgentSetup {
  client: LLMClient
  store: SessionStore
  tools: Tool[]
  system?: string
}

/** Someone reading a session's stream. */
export type Subscriber = (event: SentEvent) => void

/** Why a task could not start or be interrupted. */
export class TaskStateError extends Error {
  override readonly name = 'TaskStateError'
  constructor(readonly code: 'task_running' | 'no_task_running') {
    super(code === 'task_running' ? 'a task is already running in this session' : 'no task is running')
  }
}

interface HeldSession {
  log: EventLog
  subscribers: Set<Subscriber>
  agent?: Agent
  running?: { abort: AbortController; done: Promise<void> }
}

/**
 * The sessions this server holds: for each, the event log of its current or last task and who
 * reads it. A session it does not hold is loaded from the store as a replay, so a client of a
 * restarted server (or of another host sharing the store) loses nothing that was persisted.
 */
export class SessionHub {
  readonly #setup: AgentSetup
  readonly #sessions = new Map<string, Promise<HeldSession>>()
  readonly #newGeneration: () => string

  constructor(setup: AgentSetup, newGeneration: () => string = () => crypto.randomUUID().slice(0, 8)) {
    this.#setup = setup
    this.#newGeneration = newGeneration
  }

  /**
   * Subscribes to a session's stream, first handing `send` what the client missed (see
   * `EventLog.resume`). Backlog and subscription happen in one synchronous step, so no event
   * falls between them. Returns the unsubscribe function.
   */
  async subscribe(
    sessionId: string,
    lastEventId: string | undefined,
    send: (backlog: readonly SentEvent[], resume: Resume) => void,
    subscriber: Subscriber,
  ): Promise<() => void> {
    const held = await this.#held(sessionId)
    const resume = held.log.resume(lastEventId)
    send(held.log.since(resume.from), resume)
    held.subscribers.add(subscriber)
    return () => held.subscribers.delete(subscriber)
  }

  /** Starts a task with `text` as the user's input; fails with `task_running` if one runs. */
  async start(sessionId: string, text: string): Promise<void> {
    const held = await this.#held(sessionId)
    if (held.running) throw new TaskStateError('task_running')
    const abort = new AbortController()
    // Claimed before any await, so a second request arriving meanwhile is refused.
    held.running = { abort, done: Promise.resolve() }
    try {
      // The new log starts from the history as it is now, so it holds everything a client
      // opening the session needs; clients already reading it have the same, and carry on.
      held.log = new EventLog(this.#newGeneration(), await this.#replay(sessionId))
      held.agent ??= createAgent({ ...this.#setup, sessionId })
      const run = held.agent.run(text, { signal: abort.signal })
      const log = held.log
      const pump = async () => {
        for await (const event of run) {
          const sent = log.push(event)
          for (const subscriber of held.subscribers) subscriber(sent)
        }
        await run.done
        await this.#title(sessionId, text)
      }
      held.running.done = pump()
        // The run's events already told clients how it ended; what is left is a host failure
        // (the store), which the server's operator must see.
        .catch((error: unknown) => console.error(`session ${sessionId}: the task failed:`, error))
        .finally(() => {
          held.running = undefined
        })
    } catch (error) {
      held.running = undefined
      throw error
    }
  }

  /** Interrupts the running task; resolves once it has ended and is persisted. */
  async interrupt(sessionId: string): Promise<void> {
    const held = await this.#held(sessionId)
    if (!held.running) throw new TaskStateError('no_task_running')
    held.running.abort.abort()
    await held.running.done
  }

  /** Resolves when the session's current task (if any) has ended. */
  async idle(sessionId: string): Promise<void> {
    const held = await this.#sessions.get(sessionId)
    await held?.running?.done
  }

  /** Interrupts every running task and waits for them to end. */
  async close(): Promise<void> {
    const held = await Promise.all(this.#sessions.values())
    for (const session of held) session.running?.abort.abort()
    await Promise.allSettled(held.map((session) => session.running?.done))
  }

  #held(sessionId: string): Promise<HeldSession> {
    let held = this.#sessions.get(sessionId)
    if (!held) {
      held = this.#replay(sessionId).then((replay) => ({
        log: new EventLog(this.#newGeneration(), replay),
        subscribers: new Set<Subscriber>(),
      }))
      // A failed load is not cached: the next request tries again.
      held.catch(() => this.#sessions.delete(sessionId))
      this.#sessions.set(sessionId, held)
    }
    return held
  }

  async #replay(sessionId: string) {
    const history = await this.#read(sessionId)
    const subSessions = await loadSubSessions(this.#setup.store, history)
    subSessions.delete(sessionId)
    return deriveReplayEvents(history, { sessionId, subSessions })
  }

  /** The session's history; a session that does not exist yet is empty (its first task creates it). */
  async #read(sessionId: string): Promise<HistoryEvent[]> {
    try {
      return await this.#setup.store.read(sessionId)
    } catch (error) {
      if (SessionError.is(error) && error.code === 'session_not_found') return []
      throw error
    }
  }

  /** Names a new session after its first prompt, as the CLI does. */
  async #title(sessionId: string, text: string): Promise<void> {
    const store = this.#setup.store
    const info = await store.info(sessionId).catch(() => undefined)
    if (info && info.title === undefined) {
      const line = text.replace(/\s+/g, ' ').trim()
      await store.update(sessionId, { title: line.length > 60 ? `${line.slice(0, 59)}…` : line })
    }
  }
}
