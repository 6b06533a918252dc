import type { HistoryEvent, ReplayEvent } from '@kode/protocol'
import {
  deriveReplayEvents,
  type FollowedRecord,
  loadSubSessions,
  SessionError,
  type SessionStore,
} from '@kode/session'
import type { PostgresSessionStore } from '@kode/session-postgres'
import { type SubAgentLinks, subAgentLinks } from './sub-agent-links.js'

/** How long the feed waits before following again after the store refused or failed. */
const RETRY_MS = 1_000

/**
 * The replay a log shows for a history that may still grow: the derived events without a
 * trailing `turn_end`, which the derivation adds only because the history ends there (the turn
 * may go on with the next record another host writes).
 */
export function growingReplay(history: readonly HistoryEvent[], sessionId: string, subSessions = new Map()) {
  const events = deriveReplayEvents(history, { sessionId, subSessions })
  if (events.at(-1)?.type === 'turn_end') events.pop()
  return events
}

/** What a feed tells its session's event log. */
export interface FeedTarget {
  /**
   * Events for records another host (or another agent of this store) appended, and the calls of
   * every sub-agent the replay of the history so far shows.
   */
  append(events: readonly ReplayEvent[], links: SubAgentLinks): void
  /** The replay changed in a way that is not an extension of what was sent: start over with it. */
  reset(events: readonly ReplayEvent[], links: SubAgentLinks): void
  /**
   * The session the log showed is gone: deleted, maybe created again under its id. `history` is
   * what the feed held of it. `'kept'`: the log shows a task of this server that runs in what the
   * id holds now, and goes on with it (the feed stays paused until the task ends); `'emptied'`:
   * the log is empty now, and the feed shows what the id holds from its first record.
   */
  gone(history: readonly HistoryEvent[]): 'kept' | 'emptied'
}

/**
 * Follows a session in the store (`store.follow`) and turns the records this server did not write
 * into events for the session's log: each burst of records is replayed with the whole history,
 * and the events past those already shown are appended. While a task of this server runs, its own
 * events are the log, so the feed only keeps count; once it ended, the feed knows how many records
 * that log covers and carries on after them.
 *
 * When the follow fails (the database went away) the feed follows again from its position. It
 * starts each follow at the last record it holds, which must come back first and unchanged, and
 * passes the session's `incarnation` (the Postgres store's), read with the history it starts from
 * (see `readFeedStart`) or named by a followed record: so a session deleted and created again
 * under its id since the feed read it is not carried on with the new session's records at the old
 * one's positions, nor waited on while it holds fewer records than the feed read. The log then
 * starts over with the new session (see `FeedTarget.gone`: a task of this server in the deleted
 * session is stopped, one in what the id holds now keeps the log). A session not created yet is
 * waited for (the Postgres store's `untilCreated`), so one created and deleted again before the
 * feed saw a record of it still empties the log and says it was deleted.
 */
export class RecordFeed {
  readonly #store: SessionStore
  readonly #sessionId: string
  readonly #target: FeedTarget
  /** Whether the store's follow waits for a session not created yet (`untilCreated`). */
  readonly #awaitsCreation: boolean
  readonly #abort = new AbortController()
  /** Ends the current follow: when the feed closes, or follows the id again from its start. */
  #following = new AbortController()
  #history: HistoryEvent[]
  /** The incarnation of the session the history belongs to, once a read or a followed record named it. */
  #incarnation: string | undefined
  #subSessions = new Map<string, HistoryEvent[]>()
  /** How many records of the history the log already shows; Infinity while a local task runs. */
  #covered: number
  /** The events (as JSON) the log shows for the first `#covered` records, once known. */
  #shown: string[] | undefined
  /** Changes whenever a local task starts or ends, so a replay computed meanwhile is dropped. */
  #epoch = 0
  #links = 0
  #work: Promise<void> = Promise.resolve()
  #scheduled = false

  /** Follows on from `start`, the history the log shows (and its incarnation, when the store read one). */
  constructor(store: SessionStore, sessionId: string, start: FeedStart, target: FeedTarget) {
    this.#store = store
    this.#awaitsCreation = awaitsCreation(store)
    this.#sessionId = sessionId
    this.#target = target
    this.#history = [...start.history]
    this.#incarnation = start.incarnation
    this.#covered = start.history.length
    void this.#follow(this.#following.signal)
  }

  /** A task of this server starts: its events are the log from now on. Returns the count covered so far. */
  pause(): number {
    const covered = this.#covered
    this.#covered = Number.POSITIVE_INFINITY
    this.#shown = undefined
    this.#epoch++
    return covered
  }

  /**
   * The log now shows the session's first `covered` records: show what comes after them. Not
   * called for a task the target stopped because its session was gone (the feed took over then).
   * `ranIn`, after a task of this server, tells whether the history the feed holds is of the
   * session the task ran in (see `RunningTask.runsIn`). One that is not, or that cannot be told
   * (the feed holds no record), may be a session deleted before the task created the id's session
   * again, the feed not knowing it yet: the feed drops it and follows the id from its first
   * record, so neither that session's records nor the late news of its deletion reach the log.
   */
  resume(covered: number, ranIn?: (history: readonly HistoryEvent[]) => boolean | undefined): void {
    this.#covered = covered
    this.#shown = undefined
    this.#epoch++
    if (ranIn !== undefined && ranIn(this.#history) !== true) this.#followAgain()
    this.#schedule()
  }

  close(): void {
    this.#abort.abort()
    this.#following.abort()
  }

  /** Drops what the feed holds, without telling the target, and follows the id from its start. */
  #followAgain(): void {
    this.#following.abort()
    this.#following = new AbortController()
    this.#history = []
    this.#incarnation = undefined
    this.#subSessions = new Map()
    this.#links = 0
    void this.#follow(this.#following.signal)
  }

  /** Follows until `signal` (this follow's: see `#following`) is aborted. */
  async #follow(signal: AbortSignal): Promise<void> {
    const follow = this.#store.follow?.bind(this.#store)
    if (!follow) return
    while (!signal.aborted) {
      const held = this.#history.at(-1)
      // Nothing of the id seen yet: the Postgres store waits for the session to be created, and
      // fails (session_not_found) when it hears of one created and deleted meanwhile.
      const awaiting = held === undefined && this.#incarnation === undefined && this.#awaitsCreation
      const options = {
        from: held === undefined ? 0 : this.#history.length - 1,
        signal,
        ...(this.#incarnation === undefined ? {} : { incarnation: this.#incarnation }),
        ...(awaiting ? { untilCreated: true } : {}),
      }
      try {
        let check = held !== undefined
        for await (const followed of follow(this.#sessionId, options)) {
          // A follow replaced meanwhile holds another history's positions.
          if (signal.aborted) return
          this.#incarnation = incarnationOf(followed) ?? this.#incarnation
          if (check) {
            check = false
            if (JSON.stringify(followed.record) !== JSON.stringify(held)) throw sessionGone(this.#sessionId)
            continue
          }
          this.#history.push(followed.record)
          this.#schedule()
        }
        return
      } catch (error) {
        if (signal.aborted) return
        // The session the log shows was deleted (and maybe created again): start over with
        // whatever holds its id now. (A session read empty is known by its incarnation.)
        // A session created and deleted while awaited was there too, however briefly.
        const shown = held !== undefined || options.incarnation !== undefined || awaiting
        if (SessionError.is(error) && error.code === 'session_not_found' && shown) {
          this.#startOver()
          continue
        }
        // A session not created yet, to a store that cannot wait for it (its first task may run on
        // another host), or a store that failed: follow again from the same position in a moment.
        if (!(SessionError.is(error) && error.code === 'session_not_found')) {
          console.error(`session ${this.#sessionId}: following the store failed, retrying:`, error)
        }
        if (SessionError.is(error) && error.code === 'store_closed') return
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
      }
    }
  }

  /**
   * Drops the history of a session that is gone, and tells the target, which empties the log
   * unless it shows a task of this server that runs in what the id holds now: what the id holds
   * from now on is followed from its start. A task of this server that ran in the deleted session
   * is over as far as the log goes: the feed shows the id's records from here on, and that task
   * does not resume it.
   */
  #startOver(): void {
    const gone = this.#history
    this.#history = []
    this.#incarnation = undefined
    this.#subSessions = new Map()
    this.#links = 0
    this.#epoch++
    if (this.#target.gone(gone) === 'kept') return
    this.#covered = 0
    this.#shown = []
  }

  /** Replays once per burst of records (a page of them arrives in one go). */
  #schedule(): void {
    if (this.#scheduled) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      this.#work = this.#work
        .then(() => this.#flush())
        .catch((error: unknown) => {
          console.error(`session ${this.#sessionId}: replaying followed records failed:`, error)
        })
    })
  }

  async #flush(): Promise<void> {
    const history = this.#history.slice()
    const covered = this.#covered
    const epoch = this.#epoch
    if (history.length < covered || this.#abort.signal.aborted) return
    const shown =
      this.#shown ?? (await this.#replay(history.slice(0, covered))).events.map((e) => JSON.stringify(e))
    const replay = history.length > covered ? await this.#replay(history) : undefined
    // A local task started or ended meanwhile: its log covers other records now.
    if (this.#epoch !== epoch) return
    this.#shown = shown
    if (!replay) return
    const { events, links } = replay
    const json = events.map((e) => JSON.stringify(e))
    const extension = shown.length <= json.length && shown.every((line, i) => line === json[i])
    if (extension) this.#target.append(events.slice(shown.length), links)
    else this.#target.reset(events, links)
    this.#shown = json
    this.#covered = history.length
  }

  /** The replay of `history`, and the calls its sub-agents belong to. */
  async #replay(history: readonly HistoryEvent[]): Promise<{ events: ReplayEvent[]; links: SubAgentLinks }> {
    const replayed = (subSessions: Map<string, HistoryEvent[]>) => ({
      events: growingReplay(history, this.#sessionId, subSessions),
      links: subAgentLinks(history, this.#sessionId, subSessions),
    })
    const links = history.filter(linksSubSession)
    if (links.length === this.#links) return replayed(this.#subSessions)
    // A sub-agent's session is finished (or paused) before the record linking it is written (its
    // call's result, or the approval request its parent records for it), so sessions are loaded
    // again only when a new link appears.
    const held = this.#history
    const subSessions = await loadSubSessions(this.#store, history)
    subSessions.delete(this.#sessionId)
    // Kept only for the history they were loaded for: a session that went meanwhile (its history
    // replaced) must not lend its sub-agents to what the id holds now.
    if (this.#history === held) {
      this.#subSessions = subSessions
      this.#links = links.length
    }
    return replayed(subSessions)
  }
}

/**
 * Whether `record` links a sub-agent session: a result of the call that ran it, or the approval
 * request of a sub-agent paused in it (the sessions `loadSubSessions` loads).
 */
function linksSubSession(record: HistoryEvent): boolean {
  if ('role' in record) return record.role === 'tool' && record.uiExtra?.type === 'session'
  return record.type === 'approval_request' && record.subAgentCall !== undefined
}

/** What a feed starts from: a session's history, and the incarnation it was read from when known. */
export interface FeedStart {
  history: HistoryEvent[]
  incarnation?: string | undefined
}

/**
 * Reads a session's history for a feed to start from: with its incarnation when the store reads
 * both in one go (the Postgres store's `readWithIncarnation`), so the feed's first follow already
 * tells the session read from one created again under its id before the feed followed it.
 */
export async function readFeedStart(store: SessionStore, sessionId: string): Promise<FeedStart> {
  const withIncarnation = (store as Partial<Pick<PostgresSessionStore, 'readWithIncarnation'>>)
    .readWithIncarnation
  if (typeof withIncarnation === 'function') return withIncarnation.call(store, sessionId)
  return { history: await store.read(sessionId) }
}

/**
 * Whether the store's `follow` takes `untilCreated` (the Postgres store's, known by its
 * `readWithIncarnation`). Another store's follow fails at once for a missing session, which then
 * means "not created yet": looked up again every second.
 */
function awaitsCreation(store: SessionStore): boolean {
  return (
    typeof (store as Partial<Pick<PostgresSessionStore, 'readWithIncarnation'>>).readWithIncarnation ===
    'function'
  )
}

/** The session's incarnation a followed record names, when its store tells (the Postgres store). */
function incarnationOf(followed: FollowedRecord): string | undefined {
  const incarnation = (followed as { incarnation?: unknown }).incarnation
  return typeof incarnation === 'string' ? incarnation : undefined
}

/** What a follow that found another session under the id fails with, as the store's own check does. */
function sessionGone(sessionId: string): SessionError {
  return new SessionError('session_not_found', `session ${sessionId} was deleted and created again`, {
    sessionId,
  })
}
