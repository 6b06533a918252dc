import type { HistoryEvent } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { textReply } from '../helpers/chat-wire.js'
import { useHarness } from '../helpers/harness.js'
import { OVERFLOW } from '../helpers/overflow.js'
import { compactionsOf, isSummaryRequest, readChunkSession } from '../helpers/small-window.js'

// The summary request is sized by the token estimate; text the estimate undercounts (CJK, a
// tokenizer unlike the default 4 characters a token) can still make it overflow the window. The
// older messages then give way until it fits, as they do when the estimate says they would not.

/** Six finished tool turns whose outputs are long CJK text (one token a character, not four). */
const cjkSession = (): HistoryEvent[] =>
  readChunkSession(6, (n) => `chunk ${n}: ${'日志行'.repeat(1_000)}`, { id: 'done', text: 'Read them.' })

/** The transcript a summary request carries. */
const transcriptOf = (rawBody: string): string => {
  const body = JSON.parse(rawBody) as { messages: { role: string; content: string }[] }
  return body.messages.at(-1)!.content
}

describe('a summary request that overflows the window', () => {
  const harness = useHarness()

  test('is sent again with fewer of the older messages, and the compaction is saved', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append('long', cjkSession())
    const agent = h.createAgent({ sessionId: 'long', compaction: { keepRecent: 1 } })
    h.server.enqueue(OVERFLOW, textReply('sum-1', 'The user had six chunks read.'))

    const result = await agent.compact()

    expect(result).toMatchObject({ compacted: true, record: { summary: 'The user had six chunks read.' } })
    const summaries = h.server.requests.filter(isSummaryRequest)
    expect(summaries).toHaveLength(2)
    const [first, second] = summaries.map((request) => transcriptOf(request.rawBody))
    expect(first).toContain('chunk 1: ')
    expect(second!.length).toBeLessThan(first!.length / 2 + 100)
    // The newest summarised messages stay; the oldest give way, with a note saying so.
    expect(second).toContain('chunk 5: ')
    expect(second).not.toContain('chunk 1: ')
    expect(second).toMatch(/earlier messages? omitted/)
    expect(compactionsOf(await agent.history())).toHaveLength(1)
  })

  test('that keeps overflowing fails the compaction after a few smaller attempts', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append('long', cjkSession())
    const agent = h.createAgent({ sessionId: 'long', compaction: { keepRecent: 1 } })
    h.server.enqueue(OVERFLOW, OVERFLOW, OVERFLOW, OVERFLOW, OVERFLOW, OVERFLOW)

    const result = await agent.compact()

    expect(result).toMatchObject({ compacted: false, reason: 'failed' })
    expect(result.compacted === false && result.errorMessage).toMatch(/^The summary failed: /)
    const sent = h.server.requests.filter(isSummaryRequest).map((r) => transcriptOf(r.rawBody).length)
    expect(sent.length).toBeGreaterThan(1)
    expect(sent.length).toBeLessThanOrEqual(4)
    for (let i = 1; i < sent.length; i++) expect(sent[i]!).toBeLessThan(sent[i - 1]!)
    expect(compactionsOf(await agent.history())).toEqual([])
  })
})
