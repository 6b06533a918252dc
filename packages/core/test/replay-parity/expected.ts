import type { Event, HistoryEvent } from '@kode/protocol'
import { expect } from 'vitest'
import { replayedPart } from '../helpers/replayed.js'

// What a replay is compared with: the live events without what docs/sessions.md ("Replay")
// documents a replay leaves out or shows otherwise, and the replay without what it shows by design.

/**
 * The live events with each sub-agent's moved to just before the parent's result that links it,
 * as one block, the blocks in the order the result links them (the order they started), nested
 * children likewise: what replay shows of sub-agents that ran at the same time, whose events
 * interleaved live (docs/sessions.md, "Replay"). Each session's own events keep their live order.
 * A no-op for sub-agents that ran one after the other.
 */
export function childrenInBlocks(live: readonly Event[], root: string): Event[] {
  const bySession = new Map<string, Event[]>()
  for (const event of live) {
    const list = bySession.get(event.sessionId) ?? []
    list.push(event)
    bySession.set(event.sessionId, list)
  }
  const placed = new Set<string>()
  const stream = (id: string): Event[] => {
    placed.add(id)
    return (bySession.get(id) ?? []).flatMap((event) => {
      if (event.type !== 'tool_result' || event.uiExtra?.type !== 'session') return [event]
      const { sessionId, moreSessionIds = [] } = event.uiExtra
      const linked = [sessionId, ...moreSessionIds].filter((child) => !placed.has(child))
      return [...linked.flatMap(stream), event]
    })
  }
  const events = stream(root)
  expect(placed.size, 'every session is linked').toBe(bySession.size)
  return events
}

type Json = Record<string, unknown>

/**
 * The live events a replay can show, as JSON carries them: the replayed event types only
 * (deltas, task boundaries, `tool_call_start`, `context_usage` are live only), and without the
 * compactions that found nothing to summarise, which no record keeps (see `nothingToCompact`).
 * Every retry notice (`error` with `canRetry`) is kept: a turn's on an `error` record, a summary
 * request's on its compaction's record.
 */
export function expectedReplay(
  live: readonly Event[],
  histories: ReadonlyMap<string, readonly HistoryEvent[]>,
): Json[] {
  const events = replayedPart(live) as Json[]
  const skipped = nothingToCompact(events, histories)
  return events.filter((_, i) => !skipped.has(i))
}

/**
 * The indexes of the `compaction_start` / `compaction_end` pairs of compactions that found
 * nothing to summarise: an unsaved compaction (`compacted: false`) that its session's history
 * does not mark, in order, on an `error` (a failed summary, with `errorMessage`) or an `interrupt`.
 */
function nothingToCompact(events: readonly Json[], histories: ReadonlyMap<string, readonly HistoryEvent[]>) {
  const marked = new Map<string, { type: string; reason: string; tokensBefore: number }[]>()
  for (const [id, history] of histories) {
    const markers = history.flatMap((r) =>
      !('role' in r) && (r.type === 'error' || r.type === 'interrupt') && r.compaction
        ? [{ type: r.type, ...r.compaction }]
        : [],
    )
    marked.set(id, markers)
  }
  const skipped = new Set<number>()
  events.forEach((event, i) => {
    if (event.type !== 'compaction_end' || event.compacted === true) return
    const markers = marked.get(event.sessionId as string) ?? []
    const next = markers[0]
    const failed = event.errorMessage !== undefined
    if (
      next !== undefined &&
      next.reason === event.reason &&
      next.tokensBefore === event.tokensBefore &&
      (next.type === 'error') === failed
    ) {
      markers.shift()
      return
    }
    expect(failed, 'a failed summary is always marked').toBe(false)
    const start = events.findLastIndex(
      (e, j) => j < i && e.type === 'compaction_start' && e.sessionId === event.sessionId,
    )
    skipped.add(start).add(i)
  })
  return skipped
}

/**
 * The replay without what it shows by design and a live run does not: the `response_complete`
 * of an aborted or failed message (its text has no other event), and the `interrupt`s a turn's
 * aborted tool results each get in the replay where live emits one, after the turn's last result
 * (aborted or not: a denied call's result may follow an aborted one), and the second `interrupt`
 * of a turn whose response was aborted too (live emits one).
 */
export function comparableReplay(
  replay: readonly Event[],
  histories: ReadonlyMap<string, readonly HistoryEvent[]>,
): Json[] {
  const cut = new Set<string>()
  for (const record of [...histories.values()].flat()) {
    if ('role' in record && record.role === 'assistant' && record.responseId !== undefined) {
      if (record.stopReason === 'aborted' || record.stopReason === 'error') cut.add(record.responseId)
    }
  }
  const events = JSON.parse(JSON.stringify(replay)) as Json[]
  // By session: an aborted result's `interrupt` that more of the turn's results follow, moved to
  // where live emits the turn's one `interrupt`, after its last result, unless another comes there.
  const deferred = new Map<string, Json>()
  const out: Json[] = []
  events.forEach((event, i) => {
    if (event.type === 'response_complete' && cut.has(event.responseId as string)) return
    const session = event.sessionId as string
    if (event.type === 'interrupt') {
      // Another result follows (a call answered while it waited for approval is announced first).
      const next = events[i + 1]
      if (next?.sessionId === session && RESULTS.has(next?.type as string)) deferred.set(session, event)
      else {
        deferred.delete(session)
        out.push(event)
      }
      return
    }
    const moved = deferred.get(session)
    if (
      moved &&
      !RESULTS.has(event.type as string) &&
      event.type !== 'todo_change' &&
      event.type !== 'tool_progress'
    ) {
      out.push(moved)
      deferred.delete(session)
    }
    out.push(event)
  })
  return out
}

/** The events of a turn's results, after which an aborted result's `interrupt` may come live. */
const RESULTS: ReadonlySet<string> = new Set(['tool_result', 'interrupt', 'tool_call'])
