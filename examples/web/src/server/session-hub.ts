import {
  type Agent,
  AgentError,
  type AgentErrorCode,
  type AgentRun,
  type ApprovalDecision,
  createAgent,
  type Tool,
} from '@kode/core'
import type { Event, HistoryEvent, ReplayEvent } from '@kode/protocol'
import type { LLMClient } from '@kode/providers'
import { loadSubSessions, SessionError, type SessionInfo, type SessionStore } from '@kode/session'
import { countAppends } from './count-appends.js'
import { EventLog, type Resume, type SentEvent } from './event-log.js'
import { emptyLog, feedTarget, type HeldSession, type Subscriber } from './held-session.js'
import { type FeedStart, growingReplay, RecordFeed, readFeedStart } from './record-feed.js'
import { RunningTask } from './running-task.js'
import { type SubAgentLinks, subAgentLinks } from './sub-agent-links.js'
import { type TaskStart, taskReplay } from './task-replay.js'

export type { LogReset, Subscriber } from './held-session.js'

/** What a task runs with; the hub creates one agent per session from it. */
export interface AgentSetup {
  client: LLMClient
  store: SessionStore
  tools: Tool[]
  system?: string
}

/** Why a task could not start or be interrupted. */
export class TaskStateError extends Error {
  override readonly name = 'TaskStateError'
  constructor(
    readonly code:
      | 'task_running'
      | 'sub_agent_locked'
      | 'no_task_running'
      | 'nothing_pending'
      | 'nothing_to_continue'
      | 'sub_agent_session',
    cause?: unknown,
  ) {
    super(
      code === 'sub_agent_session'
        ? subAgentSessionMessage(cause as SessionInfo)
        : code === 'task_running'
          ? 'a task is already running in this session'
          : code === 'sub_agent_locked'
            ? `sub-agent session ${(cause as SessionError).sessionId} is still held by another writer (its lease has not expired yet); try again later`
            : code === 'no_task_running'
              ? 'no task is running'
              : code === 'nothing_to_continue'
                ? `nothing to carry on: ${(cause as Error).message}`
                : // The engine's message says which call did not fit.
                  `the decisions do not fit what awaits approval: ${(cause as Error).message}`,
      { cause },
    )
  }
}

/** The engine's refusals of a continuation whose decisions do not fit the session's state. */
const REFUSALS: ReadonlySet<AgentErrorCode> = new Set<AgentErrorCode>([
  'unknown_approval',
  'approval_already_decided',
  'approvals_missing',
  'nothing_to_continue',
])

/** Options of {@link SessionHub}. */
export interface SessionHubOptions {
  /** Makes the generation part of a new log's event ids. Default: 8 random hex digits. */
  newGeneration?: () => string
  /**
   * How long a session with no reader and no running task stays held, in ms (default 30 000):
   * then its log, feed and agent are dropped, and it reloads from the store when opened again. A
   * page that reconnects within it (a reload, a dropped connection) resumes without a reset.
   */
  releaseAfterMs?: number
}

/**
 * The sessions this server holds: for each, the event log of its current or last task and who
 * reads it. A session it does not hold is loaded from the store as a replay, so a client of a
 * restarted server (or of another host sharing the store) loses nothing that was persisted. With
 * a store that follows (`store.follow`: the Postgres store across hosts), what other hosts append
 * is replayed into the log as it is committed, so a page on this server watches a task that runs
 * on another. A session nobody reads and no task runs in is released after `releaseAfterMs`, so
 * the hub holds only the sessions in use, however many were opened.
 */
export class SessionHub {
  readonly #setup: AgentSetup
  readonly #sessions = new Map<string, Promise<HeldSession>>()
  readonly #newGeneration: () => string
  readonly #releaseAfterMs: number

  constructor(setup: AgentSetup, options: SessionHubOptions = {}) {
    this.#setup = setup
    this.#newGeneration = options.newGeneration ?? (() => crypto.randomUUID().slice(0, 8))
    this.#releaseAfterMs = options.releaseAfterMs ?? 30_000
  }

  /** Whether the hub holds the session now (its log in memory). */
  holds(sessionId: string): boolean {
    return this.#sessions.has(sessionId)
  }

  /**
   * Subscribes to a session's stream, first handing `send` what the client missed (see
   * `EventLog.resume`) and the calls the log's replayed sub-agents belong to. Backlog and
   * subscription happen in one synchronous step, so no event falls between them. Returns the
   * unsubscribe function.
   */
  async subscribe(
    sessionId: string,
    lastEventId: string | undefined,
    send: (backlog: readonly SentEvent[], resume: Resume, links: SubAgentLinks) => void,
    subscriber: Subscriber,
  ): Promise<() => void> {
    const held = await this.#current(sessionId)
    const resume = held.log.resume(lastEventId)
    send(held.log.since(resume.from), resume, held.log.links)
    held.subscribers.add(subscriber)
    return () => {
      held.subscribers.delete(subscriber)
      this.#releaseWhenUnused(held, sessionId)
    }
  }

  /**
   * Starts a task with `text` as the user's input; fails with `task_running` if one runs, and with
   * `sub_agent_session` in a sub-agent's session (so does `continue`).
   */
  async start(sessionId: string, text: string): Promise<void> {
    await this.#launch(sessionId, 'run', (agent, signal) => agent.run(text, { signal }), text)
  }

  /**
   * Continues the session's task: with `approvals`, decisions on its pending tool approvals;
   * without, a task whose server died before it finished (from its history; a call that was running
   * is settled by its tool's `onResume`). Fails with `task_running` if a task runs here or another
   * host still holds the session's lease, and with `nothing_pending` (`nothing_to_continue`
   * without `approvals`) when there is nothing to carry on, the session does not exist (it is not
   * created), or the decisions do not fit what awaits approval (an unknown or already decided call,
   * a pending call left out).
   */
  async continue(sessionId: string, approvals?: ApprovalDecision[]): Promise<void> {
    await this.#launch(
      sessionId,
      approvals ? 'approvals' : 'continue',
      (agent, signal) => agent.continue(approvals ? { approvals } : {}, { signal }),
      undefined,
      approvals ? 'nothing_pending' : 'nothing_to_continue',
    )
  }

  /**
   * Runs a task and sends its events to the session's log. Resolves once the task has produced
   * its first event: the engine refuses a continuation before any event, so that refusal reaches
   * the request that asked for it instead of the server log.
   */
  async #launch(
    sessionId: string,
    how: TaskStart,
    begin: (agent: Agent, signal: AbortSignal) => AgentRun,
    titleFrom?: string,
    refused: 'nothing_pending' | 'nothing_to_continue' = 'nothing_pending',
  ): Promise<void> {
    // A sub-agent's session is its parent's task's to drive: a task of its own there would settle
    // (deny) a call its parent waits on, and write past the parent's view of it.
    const info = await this.#setup.store.info(sessionId)
    if (info?.subAgent !== undefined) throw new TaskStateError('sub_agent_session', info)
    const held = await this.#current(sessionId)
    if (held.running) throw new TaskStateError('task_running')
    // Claimed before any await, so a second request arriving meanwhile is refused.
    const task = new RunningTask()
    held.running = task
    // This task's events are the log now; the feed takes over again after them.
    const covered = held.feed?.pause()
    held.localRecords = 0
    let start = 0
    try {
      // The new log starts from the replay the task's events extend, so it holds everything a
      // client opening the session needs; clients already reading are brought to it below.
      let replay = await this.#replay(sessionId, how)
      held.agent ??= createAgent({
        ...this.#setup,
        store: countAppends(
          this.#setup.store,
          sessionId,
          (records) => {
            held.localRecords += records.length
            held.running?.appended(records)
          },
          (recordCount) => {
            if (held.running) held.running.taken = recordCount
          },
        ),
        sessionId,
      })
      const run = begin(held.agent, task.abort.signal)
      const events = run[Symbol.asyncIterator]()
      let first: IteratorResult<Event>
      try {
        first = await events.next()
      } catch (error) {
        // Nothing ran and nothing was persisted: the session stays as it was.
        await run.done.catch(() => {})
        if (AgentError.is(error) && error.code === 'agent_busy') throw new TaskStateError('task_running')
        // Another host's task holds the session (or held it and died: its lease has not expired yet).
        if (SessionError.is(error) && error.code === 'session_locked') {
          // A dead task's sub-agent, whose lease its process renewed after the session's: settling
          // it is refused until that lease expires, before the task starts (the engine checks).
          if (error.sessionId !== undefined && error.sessionId !== sessionId)
            throw new TaskStateError('sub_agent_locked', error)
          throw new TaskStateError('task_running')
        }
        if (AgentError.is(error) && REFUSALS.has(error.code)) throw new TaskStateError(refused, error)
        // A continuation of a session that does not exist: nothing to carry on (the engine made none).
        if (how !== 'run' && SessionError.is(error) && error.code === 'session_not_found')
          throw new TaskStateError(refused, error)
        throw error
      }
      // Another host appended between the read above and the task taking the session (its task
      // ended then): the task's events extend the history as the task took it. (A session deleted
      // meanwhile is told by the feed: see `goneWhileStarting`.)
      if (task.taken !== undefined && task.taken > replay.records) {
        const grown = await this.#replay(sessionId, how, task.taken)
        if (startsWith(grown.history, replay.history)) replay = grown
      }
      start = replay.records
      const log = new EventLog(this.#newGeneration(), replay.events, replay.links)
      task.started(replay.history)
      // The session the log showed went while the task started: if the task took that session
      // (not what the id holds now), it is stopped at once and the feed shows the id from its start.
      if (task.goneWhileStarting.some((gone) => task.runsIn(gone))) {
        task.stopForDeletion()
        emptyLog(held, this.#newGeneration(), true)
        held.feed?.resume(0)
      } else this.#switchLog(held, log)
      // Once the log was emptied for a deletion, a stopped task's last events are not the log.
      const send = (event: Event) => held.log === log && this.#send(held, log, event)
      const pump = async () => {
        for (let next = first; !next.done; next = await events.next()) send(next.value)
        await run.done
        if (titleFrom !== undefined && !task.stoppedForDeletion) await this.#title(sessionId, titleFrom)
      }
      task.done = pump()
        // The run's events already told clients how it ended; what is left is a host failure
        // (the store), which the server's operator must see, unless the task was stopped because
        // its session was deleted: its appends are refused then, as expected.
        .catch((error: unknown) => {
          if (task.stoppedForDeletion) return
          console.error(`session ${sessionId}: the task failed:`, error)
          if (held.log === log) held.failedTask = true
        })
        .finally(() => {
          held.running = undefined
          // A task stopped for a deletion left the log to the feed already. The feed may still hold
          // a session deleted before this task created the id's session again: the task tells.
          if (!task.stoppedForDeletion) {
            held.feed?.resume(start + held.localRecords, (history) => task.runsIn(history))
          }
          this.#releaseWhenUnused(held, sessionId)
        })
    } catch (error) {
      held.running = undefined
      if (task.goneWhileStarting.length > 0) {
        // The log still shows a session that went while the task tried to start: what the id
        // holds now is followed from its start.
        emptyLog(held, this.#newGeneration(), false)
        held.feed?.resume(0)
      } else if (covered !== undefined) held.feed?.resume(covered)
      this.#releaseWhenUnused(held, sessionId)
      throw error
    }
  }

  /**
   * Makes `log` (a new task's: the replay it extends, nothing else yet) the session's log, and
   * brings the clients already reading to it. A log that was a replay only, and that the new one
   * extends (a turn another host left open is closed now), gets the missing events; one that holds
   * a task of this server that finished has the same content, and its readers carry on. Anything
   * else (a closed turn the task carries on, a task that failed: it showed what its store may not
   * have kept) is not a prefix of the new log: its readers reset and get all of it.
   */
  #switchLog(held: HeldSession, log: EventLog): void {
    const old = held.log
    const shown = held.replayed
    const next = log.since(0)
    const failed = held.failedTask
    held.log = log
    held.replayed = undefined
    held.failedTask = undefined
    let from: number | undefined
    if (shown !== undefined) {
      if (shown.length <= next.length && shown.every((data, i) => data === next[i]!.data)) from = shown.length
    } else if (!failed) {
      const last = old.since(old.length - 1)[0]
      if (last !== undefined && (JSON.parse(last.data) as Event).type === 'task_finish') from = next.length
    }
    for (const subscriber of held.subscribers) {
      if (from === undefined) subscriber.reset(next, { kind: 'replay' }, log.links)
      else {
        if (log.links.size > 0) subscriber.links(log.links)
        for (const event of next.slice(from)) subscriber.event(event)
      }
    }
  }

  #send(held: HeldSession, log: EventLog, event: Event | ReplayEvent): void {
    const sent = log.push(event)
    for (const subscriber of held.subscribers) subscriber.event(sent)
  }

  /** Interrupts the running task; resolves once it has ended and is persisted. */
  async interrupt(sessionId: string): Promise<void> {
    // A session the hub does not hold runs no task here: nothing to load for the answer.
    const held = await this.#sessions.get(sessionId)
    const task = held?.running
    if (!task) throw new TaskStateError('no_task_running')
    task.abort.abort()
    await task.done
  }

  /** Resolves when the session's current task (if any) has ended. */
  async idle(sessionId: string): Promise<void> {
    const held = await this.#sessions.get(sessionId)
    await held?.running?.done
  }

  /** Interrupts every running task and waits for them to end. */
  async close(): Promise<void> {
    const held = await Promise.all(this.#sessions.values())
    for (const session of held) {
      clearTimeout(session.releaseTimer)
      session.feed?.close()
      session.running?.abort.abort()
    }
    await Promise.allSettled(held.map((session) => session.running?.done))
  }

  /**
   * The session as the hub holds it now, loaded when it is not held, and kept from being
   * released: one released while it loaded (or while the caller waited) is loaded again, so
   * nothing subscribes to or runs in a session the hub no longer holds.
   */
  async #current(sessionId: string): Promise<HeldSession> {
    for (;;) {
      const entry = this.#held(sessionId)
      const held = await entry
      if (this.#sessions.get(sessionId) !== entry) continue
      clearTimeout(held.releaseTimer)
      held.releaseTimer = undefined
      return held
    }
  }

  /**
   * Releases the session after `releaseAfterMs` when nobody reads it and no task runs in it then:
   * its log, its feed (which stops following the store) and its agent are dropped.
   */
  #releaseWhenUnused(held: HeldSession, sessionId: string): void {
    const unused = () =>
      held.subscribers.size === 0 && !held.running && this.#sessions.get(sessionId) === held.entry
    if (!unused()) return
    clearTimeout(held.releaseTimer)
    held.releaseTimer = setTimeout(() => {
      held.releaseTimer = undefined
      if (!unused()) return
      this.#sessions.delete(sessionId)
      held.feed?.close()
      held.agent
        ?.close()
        .catch((error: unknown) => console.error(`session ${sessionId}: closing its agent failed:`, error))
    }, this.#releaseAfterMs)
    // A pending release must not keep the process alive.
    held.releaseTimer.unref?.()
  }

  #held(sessionId: string): Promise<HeldSession> {
    let held = this.#sessions.get(sessionId)
    if (!held) {
      const entry: Promise<HeldSession> = this.#replay(sessionId).then((replay) => {
        const log = new EventLog(this.#newGeneration(), replay.events, replay.links)
        const session: HeldSession = {
          entry,
          log,
          subscribers: new Set<Subscriber>(),
          localRecords: 0,
          replayed: log.since(0).map((event) => event.data),
        }
        if (this.#setup.store.follow) {
          session.feed = new RecordFeed(
            this.#setup.store,
            sessionId,
            { history: replay.history, incarnation: replay.incarnation },
            feedTarget(session, this.#newGeneration),
          )
        }
        return session
      })
      held = entry
      // A failed load is not cached: the next request tries again.
      held.catch(() => {
        if (this.#sessions.get(sessionId) === entry) this.#sessions.delete(sessionId)
      })
      this.#sessions.set(sessionId, held)
    }
    return held
  }

  /**
   * The session's replay, the calls its sub-agents belong to, and how many records it covers. For a task of this server about to
   * start, the replay its events extend (see `taskReplay`). Otherwise, with a store that follows,
   * a turn that ends the history is left open (see `growingReplay`): another host may still be
   * writing it; with one that does not, only a turn whose calls have no result (a dead task's,
   * which `continue` or a new message carries on) is, so a continued task's events extend what
   * pages show. With `records`, the replay of the history's first `records` records only.
   */
  async #replay(sessionId: string, how?: TaskStart, records?: number) {
    const read = await this.#read(sessionId)
    const { incarnation } = read
    const history = records === undefined ? read.history : read.history.slice(0, records)
    const subSessions = await loadSubSessions(this.#setup.store, history)
    subSessions.delete(sessionId)
    const events =
      how !== undefined
        ? taskReplay(history, sessionId, subSessions, how)
        : this.#setup.store.follow
          ? growingReplay(history, sessionId, subSessions)
          : taskReplay(history, sessionId, subSessions, 'continue')
    const links = subAgentLinks(history, sessionId, subSessions)
    return { events, links, history, incarnation, records: history.length }
  }

  /**
   * The session's history, with its incarnation when the store names one (for the feed's first
   * follow); a session that does not exist yet is empty (its first task creates it).
   */
  async #read(sessionId: string): Promise<FeedStart> {
    try {
      return await readFeedStart(this.#setup.store, sessionId)
    } catch (error) {
      if (SessionError.is(error) && error.code === 'session_not_found') return { history: [] }
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

function subAgentSessionMessage(info: SessionInfo): string {
  const parent = info.parentSessionId === undefined ? '' : ` of its parent session ${info.parentSessionId}`
  return `session ${info.id} is a sub-agent's session: the task${parent} drives it; send messages and decisions there`
}

/** Whether `history` goes on from `start`: the same record where `start` ends. */
function startsWith(history: readonly HistoryEvent[], start: readonly HistoryEvent[]): boolean {
  const at = start.length - 1
  return at < 0 || JSON.stringify(history[at]) === JSON.stringify(start[at])
}
