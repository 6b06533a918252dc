import type { RecordedRequest } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { chatStream, say } from '../helpers/chat-wire.js'
import { collect, useHarness } from '../helpers/harness.js'
import { OVERFLOW } from '../helpers/overflow.js'
import {
  compactionsOf,
  isSummaryRequest,
  readChunk,
  readChunkSession,
  TINY,
  TINY_INPUT_LIMIT,
} from '../helpers/small-window.js'

// The default estimate counts 4 characters a token; CJK text is about one token a character. A
// session of CJK tool output is then four times larger than the engine estimates, and the provider
// answers that it overflows although the estimate says it fits.

/** What the server's tokenizer counts: one token a CJK character, one per 4 other characters. */
function realTokens(request: RecordedRequest): number {
  const cjk = request.rawBody.match(/[\u3040-\u30ff\u4e00-\u9fff]/g)?.length ?? 0
  return cjk + Math.ceil((request.rawBody.length - cjk) / 4)
}

describe('a session whose text the estimate undercounts', () => {
  const h = useHarness()

  test('overflows, compacts to what the provider accepts and completes', async () => {
    await h().store.create({ id: 'cjk' })
    await h().store.append(
      'cjk',
      readChunkSession(6, (n) => `chunk ${n}: ${'日志行'.repeat(400)}`, { id: 'done', text: 'Read them.' }),
    )
    const sizes: { summary: boolean; tokens: number; accepted: boolean }[] = []
    h().server.handle((request) => {
      const summary = isSummaryRequest(request)
      const { max_completion_tokens: reserve = 500 } = request.body as { max_completion_tokens?: number }
      const accepted = realTokens(request) <= TINY.tiny!.contextWindow! - reserve
      sizes.push({ summary, tokens: realTokens(request), accepted })
      if (!accepted) return OVERFLOW
      return chatStream({ id: `r${sizes.length}`, steps: [say(summary ? 'Six chunks were read.' : 'Done.')] })
    })
    const agent = h().createAgent({
      sessionId: 'cjk',
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
    })

    const { outcome } = await collect(agent.run('Go on'))

    expect(outcome.reason).toBe('completed')
    expect(outcome.text).toBe('Done.')
    expect(compactionsOf(await agent.history())).toHaveLength(1)
    const last = sizes.at(-1)!
    expect(last).toMatchObject({ summary: false, accepted: true })
    expect(last.tokens).toBeLessThanOrEqual(TINY_INPUT_LIMIT)
  })
})
