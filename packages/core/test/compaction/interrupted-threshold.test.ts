import type { Event } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { useHarness } from '../helpers/harness.js'
import { compactionsOf, readChunk, readChunkSession, TINY } from '../helpers/small-window.js'

describe('an interrupt during a threshold compaction', () => {
  const h = useHarness()

  test('ends the turn there: no budget reported, no beforeModelCall, no request', async () => {
    await h().store.create({ id: 'long' })
    // About 3,000 estimated tokens: past the threshold (80% of 3,500), under the input limit.
    await h().store.append(
      'long',
      readChunkSession(6, (n) => `chunk ${n}: ${'x'.repeat(2_000)}`, { id: 'done', text: 'Read them.' }),
    )
    let hookCalls = 0
    const agent = h().createAgent({
      sessionId: 'long',
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      hooks: {
        beforeModelCall: () => {
          hookCalls++
          return undefined
        },
      },
      compaction: {
        keepRecent: 1,
        summarize: ({ signal }) =>
          new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      },
    })
    const controller = new AbortController()
    const run = agent.run('Go on', { signal: controller.signal })
    const events: Event[] = []
    for await (const event of run) {
      events.push(event)
      if (event.type === 'compaction_start') controller.abort()
    }
    expect((await run.done).reason).toBe('aborted')
    expect(hookCalls).toBe(0)
    const after = events.slice(events.findIndex((e) => e.type === 'compaction_end') + 1)
    expect(after.map((e) => e.type)).toEqual(['interrupt', 'turn_end', 'task_metadata', 'task_finish'])

    expect(h().server.requests).toHaveLength(0)
    expect(compactionsOf(await agent.history())).toEqual([])
  })
})
