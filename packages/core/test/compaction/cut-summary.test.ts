import type { HistoryEvent } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { chatStream, say, textReply } from '../helpers/chat-wire.js'
import { collect, useHarness } from '../helpers/harness.js'
import { OVERFLOW } from '../helpers/overflow.js'
import {
  compactionsOf,
  isSummaryRequest,
  readChunk,
  readChunkSession,
  TINY,
} from '../helpers/small-window.js'

// A summary the model stopped at its output limit (`stopReason: 'length'`) is a truncated summary:
// saved as the compaction, the model would go on from whatever it cut off.

const CUT = "The summary was cut off at the model's output limit, so nothing was compacted."

/** A summary that streams a few words, then stops at the output limit. */
const cutSummary = chatStream({ id: 'sum-1', steps: [say('The user asked to read')], finish: 'length' })

/** A session of `turns` finished tool turns whose outputs are `size` characters each. */
const toolSession = (turns: number, size: number): HistoryEvent[] =>
  readChunkSession(turns, (n) => `chunk ${n}: ${'x'.repeat(size)}`, { id: 'done', text: 'Read them.' })

describe('a summary cut off at the output limit', () => {
  const harness = useHarness()

  test('is not saved: compact() reports a failure and the history keeps only its error', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append('long', toolSession(2, 40))
    const agent = h.createAgent({ sessionId: 'long', compaction: { keepRecent: 1 } })
    const ends: unknown[] = []
    agent.events.on('compaction_end', (event) => ends.push(event))
    h.server.enqueue(cutSummary)
    const before = await agent.history()

    const result = await agent.compact()

    expect(result).toEqual({ compacted: false, reason: 'failed', errorMessage: CUT })
    expect(ends).toMatchObject([{ compacted: false, errorMessage: CUT, reason: 'manual' }])
    // The failure is kept, marked, so replay shows the compaction; nothing else is written.
    expect(await agent.history()).toMatchObject([
      ...before,
      { type: 'error', message: CUT, canRetry: false, compaction: { reason: 'manual' } },
    ])
    expect(compactionsOf(await agent.history())).toEqual([])
    expect(h.server.requests.filter(isSummaryRequest)).toHaveLength(1)
  })

  test('after an overflow, ends the task with an error naming the sizes and the cut summary, sending nothing more', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append('long', toolSession(2, 40))
    const agent = h.createAgent({ sessionId: 'long', tools: [readChunk], compaction: { keepRecent: 1 } })
    h.server.enqueue(OVERFLOW, cutSummary, textReply('r-after', 'Should not be asked.'))

    const { outcome } = await collect(agent.run('Go on'))

    expect(outcome.reason).toBe('error')
    expect(outcome.errorMessage).toMatch(
      /^The request does not fit the model's context window: about \d+ input tokens \+ \d+ reserved for output; the window is \d+ tokens\. /,
    )
    expect(outcome.errorMessage).toContain(`The compaction that was to make room failed: ${CUT}`)
    expect(h.server.requests).toHaveLength(2)
    expect(compactionsOf(await agent.history())).toEqual([])
  })

  test('at the threshold, leaves the request as it was; a provider that then overflows ends the task without a second summary', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    // About 3,000 estimated tokens: past the threshold (80% of 3,500), under the input limit.
    await h.store.append('long', toolSession(6, 2_000))
    const agent = h.createAgent({
      sessionId: 'long',
      client: h.client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      compaction: { keepRecent: 1 },
    })
    h.server.enqueue(cutSummary, OVERFLOW, textReply('r-after', 'Should not be asked.'))

    const { events, outcome } = await collect(agent.run('Go on'))

    expect(events.filter((e) => e.type === 'compaction_end')).toMatchObject([
      { reason: 'threshold', compacted: false, errorMessage: CUT },
    ])
    expect(outcome.reason).toBe('error')
    expect(outcome.errorMessage).toContain(`The compaction that was to make room failed: ${CUT}`)
    const requests = h.server.requests
    expect(requests.map(isSummaryRequest)).toEqual([true, false])
    // The request went out uncompacted: every chunk is in it.
    expect(requests[1]!.rawBody).toContain('chunk 1: ')
    expect(compactionsOf(await agent.history())).toEqual([])
  })

  test('a summary the provider ended for another reason (a content filter, a refusal) is not saved either', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append('long', toolSession(2, 40))
    const agent = h.createAgent({ sessionId: 'long', compaction: { keepRecent: 1 } })
    // OpenAI's content filter stopped the summary part-way: what came is not the account asked for.
    h.server.enqueue(
      chatStream({ id: 'sum-1', steps: [say('The user asked to read')], finish: 'content_filter' }),
    )

    const result = await agent.compact()

    expect(result).toEqual({
      compacted: false,
      reason: 'failed',
      errorMessage:
        'The summary ended without a finished answer (the provider said content_filter), so nothing was compacted.',
    })
    expect(compactionsOf(await agent.history())).toEqual([])
  })
})
