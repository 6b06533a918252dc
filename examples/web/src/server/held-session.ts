import type { Agent } from '@kode/core'
import type { HistoryEvent } from '@kode/protocol'
import { EventLog, type SentEvent } from './event-log.js'
import type { FeedTarget, RecordFeed } from './record-feed.js'
import type { RunningTask } from './running-task.js'
import { addsLinks, type SubAgentLinks } from './sub-agent-links.js'

/** Someone reading a session's stream. */
export interface Subscriber {
  /** The next event of the log. */
  event(event: SentEvent): void
  /**
   * The log started over (what was shown is not a prefix of it any more): here is all of it, and
   * the calls its replayed sub-agents belong to.
   */
  reset(log: readonly SentEvent[], why: LogReset, links: SubAgentLinks): void
  /** The calls the log's replayed sub-agents belong to grew: here are all of them, before the events that show them. */
  links(links: SubAgentLinks): void
}

/**
 * Why a log started over: its replay changed (another host's history, a task that carries on a
 * closed turn), or the session was deleted (maybe created again under its id), stopping a task
 * of this server that ran in it (`stoppedTask`).
 */
export type LogReset = { kind: 'replay' } | { kind: 'deleted'; stoppedTask: boolean }

/** A session the hub holds: its log, its readers, its agent, its running task, its feed. */
export interface HeldSession {
  /** The entry of `#sessions` this is the session of: one that was released is not it any more. */
  entry: Promise<HeldSession>
  /** Set while the session waits to be released (no reader, no task). */
  releaseTimer?: ReturnType<typeof setTimeout>
  log: EventLog
  subscribers: Set<Subscriber>
  agent?: Agent
  running?: RunningTask
  /** Follows the store for what other hosts append, when the store can follow. */
  feed?: RecordFeed
  /** Records this server's current task appended to the session. */
  localRecords: number
  /** The log's events (as JSON) while it is a replay only: no task of this server is in it. */
  replayed?: string[]
  /**
   * The log ends with a task of this server that failed (its store refused an append): it may show
   * what the store never kept, so the next log is not taken for its continuation.
   */
  failedTask?: boolean
}

/**
 * Empties the session's log: the session it showed was deleted (and a task of this server that
 * ran in it stopped, `stoppedTask`). Readers reset to nothing; what the id holds next follows.
 */
export function emptyLog(held: HeldSession, generation: string, stoppedTask: boolean): void {
  held.log = new EventLog(generation, [])
  held.replayed = []
  for (const subscriber of held.subscribers)
    subscriber.reset([], { kind: 'deleted', stoppedTask }, held.log.links)
}

/**
 * What the session's feed tells its log: another host's records as events, a replay that started
 * over, and a session that went. A task of this server that ran in the deleted session is stopped
 * (its appends are refused from then on) and the log emptied; one that runs in what the id holds
 * now (it started after the delete) keeps the log.
 */
export function feedTarget(session: HeldSession, newGeneration: () => string): FeedTarget {
  return {
    append: (events, links) => {
      // Sub-agents another host's records show: their calls first, so they render inside them.
      if (addsLinks(session.log.links, links)) {
        for (const [child, parent] of links) session.log.links.set(child, parent)
        for (const subscriber of session.subscribers) subscriber.links(session.log.links)
      }
      for (const event of events) {
        const sent = session.log.push(event)
        session.replayed?.push(sent.data)
        for (const subscriber of session.subscribers) subscriber.event(sent)
      }
    },
    reset: (events, links) => {
      session.log = new EventLog(newGeneration(), events, links)
      session.replayed = session.log.since(0).map((event) => event.data)
      const all = session.log.since(0)
      for (const subscriber of session.subscribers)
        subscriber.reset(all, { kind: 'replay' }, session.log.links)
    },
    gone: (history: readonly HistoryEvent[]) => {
      // A task already stopped for a deletion is over as far as the log goes.
      const task = session.running?.stoppedForDeletion ? undefined : session.running
      const runsIn = task?.runsIn(history)
      if (task !== undefined && runsIn !== true) {
        // Starting, it may yet take the session that went: decided at its first event.
        if (runsIn === undefined) task.goneWhileStarting.push(history)
        return 'kept'
      }
      task?.stopForDeletion()
      emptyLog(session, newGeneration(), task !== undefined)
      return 'emptied'
    },
  }
}
