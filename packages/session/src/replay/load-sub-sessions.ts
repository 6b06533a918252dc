import type { HistoryEvent, ReplayEvent } from '@kode/protocol'
import { SessionError } from '../errors.js'
import { mapLimited } from '../map-limited.js'
import { isValidSessionId } from '../session-id.js'
import type { ReadBatchesOptions, SessionStore } from '../store/session-store.js'
import { createReplayDeriver, deriveReplayEvents } from './derive-replay.js'
import { linkedSessions } from './linked-sessions.js'

/**
 * Loads every sub-agent session a history links (tool results with
 * `uiExtra: { type: 'session', sessionId, moreSessionIds? }`, and the sub-agents that paused for approval: an
 * `approval_request`'s `subAgentCall.sessionId`, linked before the call that ran it has a result),
 * and the sessions those link, from a store. A link to a session that is missing (deleted) or
 * whose id is not a valid session id is skipped.
 */
export async function loadSubSessions(
  store: SessionStore,
  history: readonly HistoryEvent[],
): Promise<Map<string, HistoryEvent[]>> {
  const loaded = new Map<string, HistoryEvent[]>()
  await loadLinked(store, history, loaded, new Set())
  return loaded
}

/**
 * Adds to `loaded` the sessions `records` link that it lacks, and the sessions those link, except
 * the ones in `skip` (and those missing from the store). Aborting `signal` throws its reason before
 * the next read: a record can link hundreds of sessions, each read whole.
 */
export async function loadLinked(
  store: SessionStore,
  records: readonly HistoryEvent[],
  loaded: Map<string, HistoryEvent[]>,
  skip: ReadonlySet<string>,
  signal?: AbortSignal,
): Promise<void> {
  let frontier: (readonly HistoryEvent[])[] = [records]
  while (frontier.length > 0) {
    const ids = new Set<string>()
    for (const events of frontier) addLinked(events, ids, loaded, skip)
    if (ids.size === 0) return
    const children = await mapLimited([...ids], SUB_SESSION_READS, async (id) => {
      signal?.throwIfAborted()
      return [id, await readIfPresent(store, id)] as const
    })
    frontier = []
    for (const [id, events] of children) {
      if (!events) continue
      loaded.set(id, events)
      frontier.push(events)
    }
  }
}

/**
 * Sub-agent sessions read at once. A session can link hundreds; read all together, a file store
 * opens a file for each (past the process's limit on open files, 256 by default on macOS, the
 * reads fail) and a database store queues a query for each.
 */
const SUB_SESSION_READS = 8

/** Options of `replaySession` and `replaySessionBatches`. */
export interface ReplaySessionOptions {
  /** Records read per batch where the store reads in batches (`readBatches`); default 1,000. */
  batchSize?: number | undefined
  /** Ends the replay, which then throws the signal's reason. */
  signal?: AbortSignal | undefined
}

/**
 * Reads a session from a store and derives its replay, sub-agent sessions included (see
 * `deriveReplayEvents`). A store with `readBatches` is read a batch at a time, so only the events
 * are held, not the history too (see `replaySessionBatches`).
 */
export async function replaySession(
  store: SessionStore,
  sessionId: string,
  options: ReplaySessionOptions = {},
): Promise<ReplayEvent[]> {
  let events: ReplayEvent[] | undefined
  for await (const batch of replaySessionBatches(store, sessionId, options)) {
    if (events === undefined) events = batch
    else for (const event of batch) events.push(event)
  }
  return events ?? []
}

/**
 * Replays a session as it is read: yields its replay events a batch at a time (each batch the
 * events of one batch of records, so never empty), the same events, in the same order, as
 * `replaySession`. Sub-agent sessions are loaded (whole) as the records linking them are read
 * (results that link them, and the approval requests of sub-agents that paused).
 * With a store that lacks `readBatches`, the history is read whole and its replay comes as one
 * batch. Fails as the store's read does; aborting `signal` throws its reason.
 *
 * This is the way to stream a stored session to a UI: each batch comes as soon as its records
 * are read and replayed, and nothing is kept once it is handed out, so a host that sends each
 * batch on and drops it holds the sub-agent histories and a few records at a time, never the
 * history or its replay (`replaySession` keeps the events). Whether a sub-agent's approval
 * request shows depends on the result of the call that ran the sub-agent (does it link the
 * sub-agent's session?), so the records from the request on are held until that result is read,
 * or the history ends. Breaking out of the loop ends the store's read.
 */
export async function* replaySessionBatches(
  store: SessionStore,
  sessionId: string,
  options: ReplaySessionOptions = {},
): AsyncGenerator<ReplayEvent[]> {
  const { signal } = options
  if (!store.readBatches) {
    signal?.throwIfAborted()
    const history = await store.read(sessionId)
    const subSessions = new Map<string, HistoryEvent[]>()
    await loadLinked(store, history, subSessions, new Set([sessionId]), signal)
    signal?.throwIfAborted()
    const events = deriveReplayEvents(history, { sessionId, subSessions })
    if (events.length > 0) yield events
    return
  }
  const subSessions = new Map<string, HistoryEvent[]>()
  const root = new Set([sessionId])
  const deriver = createReplayDeriver({ sessionId, subSessions })
  const read: ReadBatchesOptions = { batchSize: options.batchSize, signal }
  for await (const batch of store.readBatches(sessionId, read)) {
    await loadLinked(store, batch, subSessions, root, signal)
    signal?.throwIfAborted()
    const events = deriver.push(batch)
    if (events.length > 0) yield events
  }
  const rest = deriver.end()
  if (rest.length > 0) yield rest
}

/**
 * Adds to `ids` the valid session ids `history` links (see `loadSubSessions`) that are neither
 * `loaded` nor in `skip`. A
 * plain index loop, not a generator: it runs over every record a replay reads, and V8 compiles a
 * generator's loop at several times the cost.
 */
function addLinked(
  history: readonly HistoryEvent[],
  ids: Set<string>,
  loaded: ReadonlyMap<string, unknown>,
  skip: ReadonlySet<string>,
): void {
  const add = (id: string) => {
    if (isValidSessionId(id) && !loaded.has(id) && !skip.has(id)) ids.add(id)
  }
  for (let i = 0; i < history.length; i++) {
    const event = history[i]!
    if ('role' in event) {
      if (event.role === 'tool' && event.uiExtra?.type === 'session')
        for (const id of linkedSessions(event)) add(id)
    } else if (event.type === 'approval_request' && event.subAgentCall) {
      add(event.subAgentCall.sessionId)
    }
  }
}

async function readIfPresent(store: SessionStore, sessionId: string): Promise<HistoryEvent[] | undefined> {
  try {
    return await store.read(sessionId)
  } catch (error) {
    if (SessionError.is(error) && error.code === 'session_not_found') return undefined
    throw error
  }
}
