import { type HistoryEvent, type ReplayEvent, validateHistoryEvent } from '@kode/protocol'
import {
  createMemorySessionStore,
  createReplayDeriver,
  deriveReplayEvents,
  loadSubSessions,
  type ReplayOptions,
  replaySession,
  replaySessionBatches,
  type SessionStore,
} from '@kode/session'
import { describe, expect, test } from 'vitest'
import { generateSession } from '../../../test/history/generate-session.js'
import { HistoryBuilder } from '../../../test/history/history.js'
import { manyChildren } from './helpers/many-children.js'
import { scrambledHistory } from './helpers/scramble-history.js'

// The incremental deriver must give exactly what deriveReplayEvents gives for the whole history,
// however the history is split into batches.

/** Replays `history` pushed in batches whose sizes are `sizes`, repeated (a size may be 0). */
function replayInBatches(history: readonly HistoryEvent[], sizes: number[], options: ReplayOptions) {
  const deriver = createReplayDeriver(options)
  const events: ReplayEvent[] = []
  for (let from = 0, k = 0; from < history.length || k === 0; k++) {
    const size = sizes[k % sizes.length]!
    events.push(...deriver.push(history.slice(from, from + size)))
    from += size
    if (sizes.every((s) => s === 0)) break
  }
  events.push(...deriver.end())
  return events
}

describe('createReplayDeriver', () => {
  test('scrambled histories of every record kind, split at every batch size, replay exactly as whole', () => {
    let compared = 0
    for (let seed = 1; seed <= 250; seed++) {
      const length = 1 + (seed % 37)
      const { history, subSessions } = scrambledHistory(seed, length)
      for (const record of history) validateHistoryEvent(record)
      const options = { sessionId: 'main', subSessions }
      const whole = deriveReplayEvents(history, options)
      for (let size = 1; size <= history.length; size++) {
        expect(replayInBatches(history, [size], options), `seed ${seed}, batches of ${size}`).toEqual(whole)
        compared++
      }
      expect(replayInBatches(history, [0, 2, 0, 1, 3], options), `seed ${seed}, uneven`).toEqual(whole)
    }
    expect(compared).toBeGreaterThan(2000)
  }, 60_000) // about 4,900 whole replays compared deeply: half a second alone, seconds on a loaded machine

  test('scrambled histories include the records whose replay depends on later ones', () => {
    const kinds = new Set<string>()
    for (let seed = 1; seed <= 250; seed++) {
      const { history } = scrambledHistory(seed, 1 + (seed % 37))
      for (const record of history) {
        kinds.add('role' in record ? record.role : record.type)
        if ('type' in record && record.type === 'approval_request' && record.subAgentCall)
          kinds.add('sub-agent approval')
      }
    }
    expect([...kinds].sort()).toEqual(
      [
        'approval_decision',
        'approval_request',
        'assistant',
        'compaction',
        'developer',
        'error',
        'interrupt',
        'sub-agent approval',
        'system',
        'task_metadata',
        'tool',
        'tool_progress',
        'user',
      ].sort(),
    )
  })

  test('a long realistic session with sub-agents replays the same in batches of 1, 7 and 500', () => {
    const { history, subSessions } = generateSession({ seed: 7, tasks: 40, sessionId: 'main' })
    const options = { sessionId: 'main', subSessions }
    const whole = deriveReplayEvents(history, options)
    for (const size of [1, 7, 500]) expect(replayInBatches(history, [size], options)).toEqual(whole)
  })

  test('a tool result is held until the next message says whether it ends its turn', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['a', 'b'])
    const [first, second] = ask.parts.map((p) => (p.type === 'tool_call' ? p.id : ''))
    const deriver = createReplayDeriver({ sessionId: 'main' })
    expect(deriver.push([h.user('go'), ask, h.result(first!, 'a', 'one')]).map((e) => e.type)).toEqual([
      'user_message',
      'turn_start',
      'response_complete',
    ])
    const next = deriver.push([h.result(second!, 'b', 'two')])
    expect(next.map((e) => e.type)).toEqual(['tool_call', 'tool_call', 'tool_result'])
    expect(next[2]).toMatchObject({ type: 'tool_result', isLastInTurn: false })
    const rest = deriver.end()
    expect(rest.map((e) => e.type)).toEqual(['tool_result', 'turn_end'])
    expect(rest[0]).toMatchObject({ isLastInTurn: true })
  })

  test('a deriver that has ended refuses more records', () => {
    const deriver = createReplayDeriver()
    deriver.end()
    expect(() => deriver.push([])).toThrow(/ended/)
  })
})

describe('replaySession reads in batches', () => {
  async function storeOf(history: HistoryEvent[], subSessions: Map<string, HistoryEvent[]>) {
    const store = createMemorySessionStore()
    await store.create({ id: 'main' })
    await store.append('main', history)
    for (const [id, records] of subSessions) {
      await store.create({ id })
      await store.append(id, records)
    }
    return store
  }
  const expected = async (store: SessionStore) => {
    const history = await store.read('main')
    const subSessions = await loadSubSessions(store, history)
    subSessions.delete('main')
    return deriveReplayEvents(history, { sessionId: 'main', subSessions })
  }

  test('scrambled histories with sub-agent sessions replay as deriveReplayEvents of the whole, at any batch size', async () => {
    for (let seed = 1; seed <= 120; seed++) {
      const { history, subSessions } = scrambledHistory(seed, 1 + (seed % 37))
      const store = await storeOf(history, subSessions)
      const whole = await expected(store)
      for (const batchSize of [1, 2, 5, 1000]) {
        expect(
          await replaySession(store, 'main', { batchSize }),
          `seed ${seed}, batches of ${batchSize}`,
        ).toEqual(whole)
      }
    }
  }, 60_000) // 600 replays through a store: a third of a second alone, seconds on a loaded machine

  test('a realistic session with sub-agents: the batches of replaySessionBatches add up to replaySession', async () => {
    const { history, subSessions } = generateSession({ seed: 3, tasks: 30, sessionId: 'main' })
    const store = await storeOf(history, subSessions)
    const batches: ReplayEvent[][] = []
    for await (const batch of replaySessionBatches(store, 'main', { batchSize: 10 })) batches.push(batch)
    expect(batches.length).toBeGreaterThan(5)
    expect(batches.every((batch) => batch.length > 0)).toBe(true)
    expect(batches.flat()).toEqual(await expected(store))
  })

  test('replaySessionBatches hands events on as the history is read, and a break stops the read', async () => {
    const { history, subSessions } = generateSession({ seed: 4, tasks: 30, sessionId: 'main' })
    const store = await storeOf(history, subSessions)
    const readBatches = store.readBatches!.bind(store)
    let read = 0
    let finished = false
    const counting: SessionStore = {
      ...store,
      async *readBatches(sessionId, options) {
        try {
          for await (const batch of readBatches(sessionId, options)) {
            if (sessionId === 'main') read += batch.length
            yield batch
          }
        } finally {
          if (sessionId === 'main') finished = true
        }
      },
    }
    const forwarded: number[] = []
    for await (const events of replaySessionBatches(counting, 'main', { batchSize: 10 })) {
      // Each batch is the events of the records read so far: the history is not read ahead.
      forwarded.push(read)
      expect(events.length).toBeGreaterThan(0)
      if (forwarded.length === 3) break
    }
    expect(history.length).toBeGreaterThan(100)
    expect(forwarded).toEqual([10, 20, 30])
    expect(finished).toBe(true)
  })

  test('a store without readBatches is read whole, with the same replay', async () => {
    const { history, subSessions } = generateSession({ seed: 5, tasks: 10, sessionId: 'main' })
    const store = await storeOf(history, subSessions)
    const { readBatches: _, ...rest } = store
    const plain: SessionStore = rest
    expect(plain.readBatches).toBeUndefined()
    expect(await replaySession(plain, 'main')).toEqual(await expected(store))
  })

  // A session that ran many sub-agents links them all in a few records: each read whole before the
  // records' events come. An abort meanwhile must stop the reads, not wait for every one of them.
  test('an abort while the sub-agent sessions of a batch are read stops reading them', async () => {
    for (const batched of [true, false]) {
      const { store, reads, controller } = await manyChildren(40)
      const plain: SessionStore = batched ? store : { ...store, readBatches: undefined }
      const error = await replaySession(plain, 'main', { signal: controller.signal }).catch((e: unknown) => e)
      expect(error).toBe(controller.signal.reason)
      expect(reads.length).toBeLessThan(40)
    }
  })

  test('an aborted replay throws the signal reason', async () => {
    const { history, subSessions } = generateSession({ seed: 5, tasks: 10, sessionId: 'main' })
    const store = await storeOf(history, subSessions)
    const controller = new AbortController()
    const error = await (async () => {
      for await (const _ of replaySessionBatches(store, 'main', { batchSize: 10, signal: controller.signal }))
        controller.abort()
    })().catch((e: unknown) => e)
    expect((error as Error).name).toBe('AbortError')
  })
})
