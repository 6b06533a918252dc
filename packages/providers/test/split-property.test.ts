import type { AssistantMessage } from '@kode/protocol'
import { createClient } from '@kode/providers'
import { type FramedApi, frameFor } from '@kode/providers/testing'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { ask, deterministic, fixture } from './helpers.js'

// The same bytes cut at any boundaries must give the same message: SSE lines, events and UTF-8
// characters are joined across reads. A fake fetch serves the chunks, so thousands of splits
// run in milliseconds on the very code path real HTTP takes after the socket.

const CASES: [FramedApi, string, string][] = [
  ['openai-chat', 'openai-chat', 'kode-parallel-tool-calls'],
  ['openai-chat', 'openai-chat', 'kode-interleaved-reasoning'],
  ['openai-chat', 'openai-chat', 'azure-model-router.1'],
  ['openrouter', 'openrouter', 'kode-encrypted-reasoning-tool'],
  ['anthropic', 'anthropic', 'anthropic-clear-thinking.1'],
  ['anthropic', 'anthropic', 'kode-redacted-thinking-tools'],
  ['google', 'google', 'kode-thought-signatures'],
  ['google', 'google', 'kode-partial-args-types'],
  ['openai-responses', 'openai-responses', 'kode-reasoning-summaries-phase'],
  ['openai-responses', 'openai-responses', 'kode-completed-only'],
]

function bytesOf(api: FramedApi, dir: string, name: string): Uint8Array {
  return new TextEncoder().encode(frameFor(api, fixture(dir, name)).join(''))
}

async function run(api: FramedApi, bytes: Uint8Array, cuts: number[]): Promise<AssistantMessage> {
  const bounds = [0, ...[...new Set(cuts)].sort((a, b) => a - b), bytes.length]
  const fetch = async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 1; i < bounds.length; i++) controller.enqueue(bytes.slice(bounds[i - 1], bounds[i]))
          controller.close()
        },
      }),
      { headers: { 'content-type': 'text/event-stream' } },
    )
  const client = createClient({ api, model: 'm', baseUrl: 'http://fake', fetch, ...deterministic() })
  return client.complete(ask())
}

describe.each(CASES)('%s %s / %s', (api, dir, name) => {
  const bytes = bytesOf(api, dir, name)

  test('one cut at every byte boundary gives the same message', async () => {
    const expected = await run(api, bytes, [])
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(await run(api, bytes, [cut])).toEqual(expected)
      // Everything here settles in microtasks; let the test runner's own messages through.
      if (cut % 100 === 0) await new Promise((resolve) => setImmediate(resolve))
    }
  }, 60_000) // one full client run per byte: seconds on a loaded machine, not a speed check

  test('any set of cuts gives the same message', async () => {
    const expected = await run(api, bytes, [])
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }),
        async (cuts) => {
          expect(await run(api, bytes, cuts)).toEqual(expected)
        },
      ),
      { numRuns: 150 },
    )
  }, 60_000)
})
