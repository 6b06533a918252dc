import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createAgent } from '@kode/core'
import type { HistoryEvent } from '@kode/protocol'
import { createClient } from '@kode/providers'
import { type FramedApi, frameFor, readChunksFile, type ScriptedResponse } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { collect, counter, NOW, useHarness } from '../helpers/harness.js'
import { readChunk, readChunkSession } from '../helpers/small-window.js'

// The recorded bodies live with the providers' tests, which check their classification.
const providerFixtures = join(import.meta.dirname, '../../../providers/test/fixtures')
const overflowDir = join(providerFixtures, 'errors/context-overflow')

/** Each api: its model, how its streams are framed, and a recorded text response. */
const apis: Record<string, { model: string; framing: FramedApi; text: string }> = {
  'openai-chat': { model: 'gpt-4o', framing: 'openai-chat', text: 'openai-chat/openai-text' },
  openrouter: { model: 'openai/gpt-4o', framing: 'openai-chat', text: 'openai-chat/openai-text' },
  anthropic: { model: 'claude-sonnet-4-5', framing: 'anthropic', text: 'anthropic/anthropic-text' },
  google: { model: 'gemini-2.5-pro', framing: 'google', text: 'google/google-text' },
  'openai-responses': { model: 'gpt-5', framing: 'openai-responses', text: 'openai-responses/azure-text.1' },
}

const overflowBodies = readdirSync(overflowDir).flatMap((file) => {
  const match = /^(.+)\.(\d{3})\.json$/.exec(file)
  if (!match) return []
  const api = match[1]!
  const response: ScriptedResponse = {
    status: Number(match[2]),
    body: readFileSync(join(overflowDir, file), 'utf8'),
  }
  return [{ name: `${api} (HTTP ${match[2]})`, api, response }]
})
const inStream = {
  name: 'openai-responses (in the stream)',
  api: 'openai-responses',
  response: {
    body: frameFor(
      'openai-responses',
      readChunksFile(join(overflowDir, 'openai-responses.stream.chunks.txt')),
    ),
  } as ScriptedResponse,
}
const cases = [...overflowBodies, inStream]

function textResponse(api: string): ScriptedResponse {
  const { framing, text } = apis[api]!
  return { body: frameFor(framing, readChunksFile(join(providerFixtures, `wire/${text}.chunks.txt`))) }
}

/** A session with two finished tool turns and an answer, so there is something to summarise. */
const earlierSession = (): HistoryEvent[] =>
  readChunkSession(2, (n) => `chunk ${n}`, { id: 'a3', text: 'Read two chunks.' })

describe("a provider's context-overflow error", () => {
  const h = useHarness()

  async function agentFor(api: string) {
    await h().store.create({ id: 'long' })
    await h().store.append('long', earlierSession())
    const summaries: string[] = []
    const agent = createAgent({
      client: createClient({
        api,
        model: apis[api]!.model,
        apiKey: 'sk-test-key-0123456789',
        baseUrl: h().server.url,
        retry: { maxAttempts: 1 },
        now: () => NOW,
        createId: counter('m'),
      }),
      store: h().store,
      sessionId: 'long',
      tools: [readChunk],
      now: () => NOW,
      createId: counter('id'),
      compaction: {
        keepRecent: 1,
        summarize: async ({ transcript }) => {
          summaries.push(transcript)
          return 'The user asked to read the log; two chunks were read.'
        },
      },
    })
    return { agent, summaries }
  }

  test.each(cases)('$name triggers exactly one compaction and one retry', async ({ api, response }) => {
    const { agent, summaries } = await agentFor(api)
    h().server.enqueue(response, textResponse(api))
    const { events, outcome } = await collect(agent.run('Go on'))
    expect(outcome.reason).toBe('completed')
    expect(h().server.requests).toHaveLength(2)
    expect(summaries).toHaveLength(1)
    expect(summaries[0]).toContain('Result of read_chunk (success): chunk 1')
    expect(events.filter((e) => e.type === 'compaction_start')).toMatchObject([{ reason: 'overflow' }])
    // The budget is reported before the first call and again before the retry, after the
    // compaction (for a model whose window the catalog knows: not openrouter's here).
    const kinds = events
      .filter((e) => e.type.startsWith('compaction_') || (e.type === 'context_usage' && e.estimated))
      .map((e) => e.type)
    const compacting = ['compaction_start', 'compaction_end']
    expect(kinds).toEqual(
      agent.client.modelInfo?.contextWindow === undefined
        ? compacting
        : ['context_usage', ...compacting, 'context_usage'],
    )
    const history = await agent.history()
    const records = history.filter((r) => !('role' in r) && r.type === 'compaction')
    expect(records).toMatchObject([{ reason: 'overflow', firstKeptId: 'a3' }])
    // The retry sent the compacted view: the summary instead of the first turns.
    const retry = h().server.requests[1]!.rawBody
    expect(retry).toContain('two chunks were read')
    expect(retry).not.toContain('Read the log')
  })

  test.each(cases)(
    '$name twice ends the task with an error naming the sizes, after one compaction',
    async ({ api, response }) => {
      const { agent, summaries } = await agentFor(api)
      h().server.enqueue(response, response)
      const { outcome } = await collect(agent.run('Go on'))
      expect(outcome.reason).toBe('error')
      expect(outcome.errorMessage).toMatch(
        /^The request does not fit the model's context window even after compaction: about \d+ input tokens \+ \d+ reserved for output; the window is (\d+ tokens|unknown)\. /,
      )
      expect(h().server.requests).toHaveLength(2)
      expect(summaries).toHaveLength(1)
    },
  )

  test('with compaction off, it ends the task at once with the sizes', async () => {
    await h().store.create({ id: 'off' })
    const agent = h().createAgent({ sessionId: 'off', compaction: false })
    h().server.enqueue(cases[0]!.response)
    const { outcome } = await collect(agent.run('hi'))
    expect(outcome.errorMessage).toMatch(
      /^The request does not fit the model's context window: about \d+ input tokens/,
    )
    expect(h().server.requests).toHaveLength(1)
  })

  test('an interrupt during the compaction it triggers ends the task aborted, not failed', async () => {
    await h().store.create({ id: 'long' })
    await h().store.append('long', earlierSession())
    const controller = new AbortController()
    const agent = h().createAgent({
      sessionId: 'long',
      tools: [readChunk],
      compaction: {
        keepRecent: 1,
        // The user interrupts while the summary is being written.
        summarize: () => {
          setTimeout(() => controller.abort(), 5)
          return new Promise<string>(() => {})
        },
      },
    })
    h().server.enqueue(cases[0]!.response)
    const { events, outcome } = await collect(agent.run('Go on', { signal: controller.signal }))
    expect(outcome.reason).toBe('aborted')
    expect(outcome.errorMessage).toBeUndefined()
    expect(events.filter((e) => e.type === 'error')).toEqual([])
    expect(events.map((e) => e.type)).toContain('interrupt')
    const history = await agent.history()
    expect(history.filter((r) => !('role' in r) && r.type === 'error')).toEqual([])
    // The interrupted compaction's marker, then the task's own interrupt.
    expect(history.slice(-3, -1)).toMatchObject([
      { type: 'interrupt', compaction: { reason: 'overflow' } },
      { type: 'interrupt' },
    ])
    expect(history.at(-2)).not.toHaveProperty('compaction')
  })
})
