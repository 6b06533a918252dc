import { describe, expect, test } from 'vitest'
import { textReply } from '../helpers/chat-wire.js'
import { collect, useHarness } from '../helpers/harness.js'
import {
  compactionsOf,
  isSummaryRequest,
  readChunk,
  readChunkSession,
  TINY,
} from '../helpers/small-window.js'

// A summary stands in for the older part of the session in every later request. One larger than
// what the instructions leave of the window makes no room: saved, every later request would be
// larger than the window, and every later compaction would start from it. The model's own summary
// is bounded by its output budget; a host's `summarize` is not.

const NO_FIT =
  /^The summary \(about \d+ tokens\) does not fit the window: the system prompt and tool definitions leave it about \d+ tokens, so nothing was compacted\.$/

/** About 3,750 tokens: less than the 45 results it summarises, more than `tiny`'s 3,500-token limit. */
const HUGE = 'x'.repeat(15_000)

/** A finished session of `turns` tool turns, each result about 100 tokens. */
const session = (turns: number) =>
  readChunkSession(turns, (n) => `chunk ${n}: ${'log line with some words in it; '.repeat(12)}`, {
    id: 'done',
    text: 'Read them.',
  })

describe("a host's summary larger than the window", () => {
  const harness = useHarness()

  test('is not saved, however much it summarises: compact() reports a failure', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append('long', session(45))
    const agent = h.createAgent({
      sessionId: 'long',
      client: h.client({ model: 'tiny', catalog: TINY }),
      compaction: { keepRecent: 1, summarize: async () => HUGE },
    })
    const before = await agent.history()

    const result = await agent.compact()

    expect(result).toMatchObject({
      compacted: false,
      reason: 'failed',
      errorMessage: expect.stringMatching(NO_FIT),
    })
    expect(await agent.history()).toMatchObject([
      ...before,
      {
        type: 'error',
        message: expect.stringMatching(NO_FIT),
        canRetry: false,
        compaction: { reason: 'manual' },
      },
    ])
    expect(compactionsOf(await agent.history())).toEqual([])
  })

  test('at the threshold, leaves the request as it was, and the turn goes on', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    // About 3,300 tokens: past the threshold (2,800) of `tiny`, within its limit.
    await h.store.append('long', session(30))
    const agent = h.createAgent({
      sessionId: 'long',
      client: h.client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      compaction: { summarize: async () => HUGE },
    })
    h.server.enqueue(textReply('r-1', 'Done reading.'))

    const { events, outcome } = await collect(agent.run('Go on'))

    expect(outcome.reason).toBe('completed')
    expect(events.filter((e) => e.type === 'compaction_end')).toMatchObject([
      { compacted: false, reason: 'threshold', errorMessage: expect.stringMatching(NO_FIT) },
    ])
    expect(compactionsOf(await agent.history())).toEqual([])
    const [sent] = h.server.requests.filter((r) => !isSummaryRequest(r))
    expect(sent!.rawBody).not.toContain('xxxxxxxx')
    expect(sent!.rawBody).toContain('chunk 1: ')
  })

  test('at the threshold, one within the window but no smaller than what it replaces is not saved either', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append('long', session(30))
    // About 3,100 tokens: within what the window leaves it, no less than the results it replaces.
    const agent = h.createAgent({
      sessionId: 'long',
      client: h.client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      compaction: { summarize: async () => 'y'.repeat(12_400) },
    })
    h.server.enqueue(textReply('r-1', 'Done reading.'))

    const { events, outcome } = await collect(agent.run('Go on'))

    expect(outcome.reason).toBe('completed')
    const [end] = events.filter((e) => e.type === 'compaction_end')
    expect(end).toMatchObject({ compacted: false, reason: 'threshold' })
    const message = (end as { errorMessage?: string }).errorMessage ?? ''
    const [, after, before] = /about (\d+) tokens, against (\d+) before/.exec(message) ?? []
    expect(message).toMatch(
      /^The summary \(about \d+ tokens\) leaves the request no smaller \(about \d+ tokens, against \d+ before\), so nothing was compacted\.$/,
    )
    expect(Number(after)).toBeGreaterThanOrEqual(Number(before))
    expect(compactionsOf(await agent.history())).toEqual([])
    const [sent] = h.server.requests.filter((r) => !isSummaryRequest(r))
    expect(sent!.rawBody).not.toContain('yyyyyyyy')
    expect(sent!.rawBody).toContain('chunk 1: ')
  })
})
