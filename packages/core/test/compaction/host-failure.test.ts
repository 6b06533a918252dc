import { checkEventOrder, type Event } from '@kode/protocol'
import { deriveReplayEvents } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { textReply } from '../helpers/chat-wire.js'
import { useHarness } from '../helpers/harness.js'
import { withAppends } from '../helpers/recording-store.js'
import { readChunk, readChunkSession, TINY } from '../helpers/small-window.js'

// An event listener that throws stops the task as a failure, never as an interrupt: a compaction
// it stops is a failed one too.

describe('a listener that throws at compaction_start', () => {
  const h = useHarness()

  test('fails the compaction, marked with its error; nothing reads as interrupted', async () => {
    await h().store.create({ id: 'long' })
    // About 3,000 estimated tokens: past the threshold (80% of 3,500), under the input limit.
    await h().store.append(
      'long',
      readChunkSession(6, (n) => `chunk ${n}: ${'x'.repeat(2_000)}`, { id: 'done', text: 'Read them.' }),
    )
    const agent = h().createAgent({
      sessionId: 'long',
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      compaction: { keepRecent: 1, summarize: async () => 'Six chunks were read.' },
    })
    agent.events.on('compaction_start', () => {
      throw new Error('boom')
    })
    const events: Event[] = []
    agent.events.on('event', (event) => events.push(event))

    await expect(agent.run('Go on').done).rejects.toThrow('boom')

    const failure = 'An event listener threw: boom'
    expect(events.find((e) => e.type === 'compaction_end')).toMatchObject({
      compacted: false,
      errorMessage: failure,
    })
    expect(events.some((e) => e.type === 'interrupt')).toBe(false)
    const history = await agent.history()
    expect(history.some((r) => !('role' in r) && r.type === 'interrupt')).toBe(false)
    expect(history).toContainEqual(
      expect.objectContaining({ type: 'error', message: failure, compaction: expect.anything() }),
    )
    expect(h().server.requests).toHaveLength(0)
    const replay = deriveReplayEvents(history)
    expect(replay.find((e) => e.type === 'compaction_end')).toMatchObject({
      compacted: false,
      errorMessage: failure,
    })
    expect(checkEventOrder(events)).toEqual([])
    expect(checkEventOrder(replay)).toEqual([])
  })
})

// agent.compact() runs no task, but its events reach the same listeners: a listener that throws,
// or a store that fails, must still leave a well-formed sequence (no compaction_start without
// its compaction_end) and a history whose replay shows what the listeners saw.
describe('agent.compact() and a host that fails', () => {
  const h = useHarness()

  async function longSession(): Promise<void> {
    await h().store.create({ id: 'long' })
    await h().store.append(
      'long',
      readChunkSession(4, (n) => `chunk ${n}`, { id: 'done', text: 'Read them.' }),
    )
  }

  test('a listener that throws at compaction_start fails the compaction, marked, and compact() rejects with its error', async () => {
    await longSession()
    const agent = h().createAgent({ sessionId: 'long', compaction: { keepRecent: 1 } })
    let thrown = 0
    agent.events.on('compaction_start', () => {
      if (thrown++ === 0) throw new Error('boom')
    })
    const events: Event[] = []
    agent.events.on('event', (event) => events.push(event))

    await expect(agent.compact()).rejects.toThrow('boom')

    const failure = 'An event listener threw: boom'
    expect(events.map((e) => e.type)).toEqual(['compaction_start', 'compaction_end'])
    expect(events[1]).toMatchObject({ reason: 'manual', compacted: false, errorMessage: failure })
    expect(h().server.requests).toHaveLength(0)
    const history = await agent.history()
    expect(history.at(-1)).toMatchObject({
      type: 'error',
      message: failure,
      compaction: { reason: 'manual' },
    })
    const replay = deriveReplayEvents(history).filter((e) => e.type.startsWith('compaction'))
    expect(replay).toMatchObject([
      { type: 'compaction_start', reason: 'manual' },
      { type: 'compaction_end', compacted: false, errorMessage: failure },
    ])
    // The session is free again: the next compaction runs.
    h().server.enqueue(textReply('s1', 'Four chunks were read.'))
    await expect(agent.compact()).resolves.toMatchObject({ compacted: true })
  })

  test('a listener that throws at compaction_end keeps the saved compaction; compact() rejects with its error', async () => {
    await longSession()
    const agent = h().createAgent({ sessionId: 'long', compaction: { keepRecent: 1 } })
    let thrown = 0
    agent.events.on('compaction_end', () => {
      if (thrown++ === 0) throw new Error('late boom')
    })
    h().server.enqueue(textReply('s1', 'Four chunks were read.'))

    await expect(agent.compact()).rejects.toThrow('late boom')

    const history = await agent.history()
    expect(history.at(-1)).toMatchObject({ type: 'compaction', summary: 'Four chunks were read.' })
  })

  test('a store that fails to append ends the compaction with compaction_end, then compact() rejects', async () => {
    await longSession()
    const store = withAppends(h().store, async () => {
      throw new Error('disk full')
    })
    const agent = h().createAgent({ sessionId: 'long', store, compaction: { keepRecent: 1 } })
    const events: Event[] = []
    agent.events.on('event', (event) => events.push(event))
    h().server.enqueue(textReply('s1', 'Four chunks were read.'))

    await expect(agent.compact()).rejects.toThrow('disk full')

    expect(events.map((e) => e.type)).toEqual(['compaction_start', 'compaction_end'])
    expect(events[1]).toMatchObject({ compacted: false, errorMessage: 'disk full' })
    expect(checkEventOrder(events)).toEqual([])
  })
})
