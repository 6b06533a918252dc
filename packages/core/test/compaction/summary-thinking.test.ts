import { COMPACTION_PROMPT } from '@kode/core'
import type { ModelInfo } from '@kode/providers'
import type { RecordedRequest, ScriptedResponse } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { anthropicStream } from '../helpers/anthropic-wire.js'
import { collect, useHarness } from '../helpers/harness.js'
import { isSummaryRequest, readChunk, readChunkSession } from '../helpers/small-window.js'

// Extended thinking turned on through `providerOptions` (the wire's own `thinking` field) must not
// reach the summary request: its budget is a turn's, larger than the summary's own output budget on
// a small window, and Anthropic refuses a request whose `budget_tokens` is not below `max_tokens`.

/** A Claude model with a small window: the summary may write 15% of it, 1,200 tokens. */
const SMALL_CLAUDE: Record<string, ModelInfo> = {
  'claude-small': { contextWindow: 8_000, maxOutputTokens: 4_000 },
}

const THINKING = { anthropic: { thinking: { type: 'enabled', budget_tokens: 2_048 } } }

/**
 * Anthropic's answer to a request body: its 400 for a thinking budget not below `max_tokens`, else
 * `reply`.
 */
function anthropicChecking(reply: ScriptedResponse) {
  return (request: RecordedRequest): ScriptedResponse => {
    const body = request.body as { max_tokens: number; thinking?: { budget_tokens?: number } }
    const budget = body.thinking?.budget_tokens
    if (budget !== undefined && budget >= body.max_tokens)
      return {
        status: 400,
        body: JSON.stringify({
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message: '`max_tokens` must be greater than `thinking.budget_tokens`.',
          },
        }),
      }
    return reply
  }
}

describe("the summary request and extended thinking in the task's providerOptions", () => {
  const harness = useHarness()

  async function longSession() {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append(
      'long',
      readChunkSession(12, (n) => `chunk ${n}: ${'log line with some words in it; '.repeat(12)}`, {
        id: 'a13',
        text: 'Read.',
      }),
    )
    return h
  }

  test('agent.compact() sends no thinking with the summary, and its own max_tokens', async () => {
    const h = await longSession()
    h.server.handle(anthropicChecking(anthropicStream('msg_s1', [{ text: 'Twelve chunks read.' }])))
    const agent = h.createAgent({
      sessionId: 'long',
      client: h.client({ api: 'anthropic', model: 'claude-small', catalog: SMALL_CLAUDE }),
      tools: [readChunk],
      compaction: { keepRecent: 1 },
      modelSettings: { providerOptions: { anthropic: { ...THINKING.anthropic, top_k: 40 } } },
    })
    expect(await agent.compact()).toMatchObject({
      compacted: true,
      record: { summary: 'Twelve chunks read.' },
    })
    const [summary] = h.server.requests
    expect(isSummaryRequest(summary!)).toBe(true)
    // The summary's own budget, the task's other field, and no `thinking`.
    const cache = { type: 'ephemeral' }
    expect(summary!.body).toEqual({
      model: 'claude-small',
      max_tokens: 1_200,
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'text',
              text: expect.stringMatching(
                /^<conversation>\nUser: Read the log\n[\s\S]*Write the summary now\.$/,
              ),
              cache_control: cache,
            },
          ],
        },
      ],
      stream: true,
      system: [{ type: 'text', text: COMPACTION_PROMPT, cache_control: cache }],
      top_k: 40,
    })
  })

  test("a run's threshold compaction succeeds, and the turn after it still thinks", async () => {
    const h = await longSession()
    let turn = 0
    h.server.handle((request) => {
      if (isSummaryRequest(request))
        return anthropicChecking(anthropicStream('msg_s1', [{ text: 'Twelve chunks read.' }]))(request)
      turn++
      return anthropicChecking(
        anthropicStream(`msg_${turn}`, [{ thinking: 'Done.', signature: 'sig-1' }, { text: 'All read.' }]),
      )(request)
    })
    const agent = h.createAgent({
      sessionId: 'long',
      client: h.client({ api: 'anthropic', model: 'claude-small', catalog: SMALL_CLAUDE }),
      tools: [readChunk],
      compaction: { keepRecent: 1, threshold: 0.1 },
      modelSettings: { providerOptions: THINKING },
    })
    const { events, outcome } = await collect(agent.run('Go on'))
    expect(outcome.reason).toBe('completed')
    expect(events.find((event) => event.type === 'compaction_end')).toMatchObject({ compacted: true })
    const [summary, next] = h.server.requests
    expect(isSummaryRequest(summary!)).toBe(true)
    expect(summary!.body).not.toHaveProperty('thinking')
    expect(next!.body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2_048 } })
  })
})
