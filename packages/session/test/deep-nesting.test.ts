import type { HistoryEvent } from '@kode/protocol'
import {
  createMemorySessionStore,
  deriveReplayEvents,
  exportHtml,
  exportSessionHtml,
  forkSession,
  loadSubSessions,
  replaySession,
  type SessionStore,
} from '@kode/session'
import { describe, expect, test } from 'vitest'
import { callIds, HistoryBuilder } from '../../../test/history/history.js'

// Sub-agent sessions nest to any depth: a chain far deeper than the call stack would allow one
// frame per level is read, replayed, exported and forked without recursion.
const DEPTH = 10_000

const id = (level: number) => `s${level}`

/** A session that ran the sub-agent of `level + 1` and got its result (none at the bottom). */
function finished(b: HistoryBuilder, level: number): HistoryEvent[] {
  const ask = b.calls(['task'])
  const link = level < DEPTH ? { uiExtra: { type: 'session' as const, sessionId: id(level + 1) } } : {}
  return [
    b.user(`level ${level}`),
    ask,
    b.result(callIds(ask)[0]!, 'task', `done ${level}`, link),
    b.assistant(`answer ${level}`, { stopReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } }),
    b.taskMetadata(2),
  ]
}

/** A session paused on its sub-agent of `level + 1`, which paused on its own (the bottom asks). */
function paused(b: HistoryBuilder, level: number): HistoryEvent[] {
  return pausedOn(b, level, level < DEPTH ? id(level + 1) : undefined)
}

/** As `paused`, with the bottom waiting on the top: a cycle through every level. */
function pausedInCycle(b: HistoryBuilder, level: number): HistoryEvent[] {
  return pausedOn(b, level, level < DEPTH ? id(level + 1) : id(0))
}

function pausedOn(b: HistoryBuilder, level: number, child: string | undefined): HistoryEvent[] {
  const ask = b.calls(['task'])
  const callId = callIds(ask)[0]!
  const request: HistoryEvent = {
    type: 'approval_request',
    id: `request-${level}`,
    createdAt: 1,
    toolCallId: 'write',
    toolName: 'write_file',
    arguments: '{}',
    ...(child !== undefined
      ? { sessionId: id(DEPTH), subAgentCall: { toolCallId: callId, sessionId: child } }
      : {}),
  }
  return [b.user(`level ${level}`), ask, request, b.taskMetadata(1)]
}

async function chain(make: (b: HistoryBuilder, level: number) => HistoryEvent[]) {
  let n = 0
  const store = createMemorySessionStore({ createId: () => `copy${++n}` })
  const b = new HistoryBuilder()
  for (let level = 0; level <= DEPTH; level++) {
    await store.create({
      id: id(level),
      ...(level > 0 ? { parentSessionId: id(level - 1), subAgent: { name: 'task' } } : {}),
    })
    await store.append(id(level), make(b, level))
  }
  return store
}

/** The same store, with the bottom session linking the top one: a cycle through every level. */
async function cycle(store: SessionStore) {
  const b = new HistoryBuilder(1_800_000_000_000)
  const ask = b.calls(['task'])
  await store.append(id(DEPTH), [
    ask,
    b.result(callIds(ask)[0]!, 'task', 'again', { uiExtra: { type: 'session', sessionId: id(0) } }),
  ])
}

describe(`a chain of ${DEPTH} nested sub-agent sessions`, { timeout: 30_000 }, () => {
  test('loads every level', async () => {
    const store = await chain(finished)
    const subSessions = await loadSubSessions(store, await store.read(id(0)))
    expect(subSessions.size).toBe(DEPTH)
    await cycle(store)
    expect((await loadSubSessions(store, await store.read(id(0)))).size).toBe(DEPTH + 1)
  })

  test('replays every level, innermost first, also through a link cycle', async () => {
    const store = await chain(finished)
    const events = await replaySession(store, id(0))
    const results = events.filter((event) => event.type === 'tool_result')
    expect(results).toHaveLength(DEPTH + 1)
    expect(results[0]).toMatchObject({ sessionId: id(DEPTH), result: `done ${DEPTH}` })
    expect(results.at(-1)).toMatchObject({ sessionId: id(0), result: 'done 0' })
    await cycle(store)
    const history = await store.read(id(0))
    const again = deriveReplayEvents(history, {
      sessionId: id(0),
      subSessions: await loadSubSessions(store, history),
    })
    expect(again.filter((event) => event.type === 'tool_result')).toHaveLength(DEPTH + 2)
  })

  test('exports every level nested in its parent, also through a link cycle', async () => {
    const store = await chain(finished)
    const page = await exportSessionHtml(store, id(0))
    expect(page.match(/class="sub-session"/g)).toHaveLength(DEPTH)
    expect(page).toContain(`with ${DEPTH} sub-agent sessions`)
    // Innermost last: each level's answer comes after its sub-agent's.
    expect(page.indexOf(`answer ${DEPTH}`)).toBeLessThan(page.indexOf('answer 0'))
    await cycle(store)
    const history = await store.read(id(0))
    const html = exportHtml(history, { subSessions: await loadSubSessions(store, history) })
    expect(html.match(/class="sub-session"/g)).toHaveLength(DEPTH + 1)
  })

  test('a fork copies every level of a chain of paused sub-agents', async () => {
    const store = await chain(paused)
    const fork = await forkSession(store, id(0))
    const sessions = await store.list()
    expect(sessions).toHaveLength(2 * (DEPTH + 1))
    let at = fork.id
    for (let level = 0; level < DEPTH; level++) {
      const request = (await store.read(at)).find((e) => 'type' in e && e.type === 'approval_request')
      if (!request || !('subAgentCall' in request) || !request.subAgentCall) throw new Error('no request')
      expect(request.subAgentCall.sessionId).not.toBe(id(level + 1))
      at = request.subAgentCall.sessionId
    }
    expect(await store.read(at)).toEqual(await store.read(id(DEPTH)))
  })

  test('a fork of a chain of paused sub-agents that waits on its top copies each once', async () => {
    const store = await chain(pausedInCycle)
    await forkSession(store, id(0))
    // The fork, a copy of each sub-agent, and one of the top (as the bottom's sub-agent).
    expect(await store.list()).toHaveLength(DEPTH + 1 + 1 + DEPTH + 1)
  })
})
