import { checkEventOrder, type Event } from '@kode/protocol'
import { deriveReplayEvents } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { useHarness } from '../helpers/harness.js'
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
