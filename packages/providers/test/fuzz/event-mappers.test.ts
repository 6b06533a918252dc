import { type AssistantMessage, decodeHistoryEvent, encodeHistoryEvent } from '@kode/protocol'
import { createClient, ProviderError } from '@kode/providers'
import type { FramedApi } from '@kode/providers/testing'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { ask, deterministic, fixture } from '../helpers.js'
import { damage, damageArb } from './mutations.js'

// Every event mapper against recorded streams a broken or hostile server has damaged: fields
// replaced by values of any type, hostile keys (`__proto__`, `constructor`) anywhere, fields
// deleted, events dropped, repeated or cut off, and the bytes cut mid-event. Whatever arrives,
// a response either ends in a message that the history schema accepts, or fails with a
// `ProviderError`; nothing writes to a prototype, and nothing hangs (the fuzz is bounded in runs).

const CASES: [FramedApi, string, string[]][] = [
  [
    'openai-chat',
    'openai-chat',
    ['kode-parallel-tool-calls', 'deepseek-reasoning', 'kode-interleaved-reasoning'],
  ],
  ['openrouter', 'openrouter', ['kode-encrypted-reasoning-tool', 'kode-reasoning-details']],
  [
    'anthropic',
    'anthropic',
    ['kode-redacted-thinking-tools', 'kode-server-tools-code', 'kode-message-start-content'],
  ],
  ['google', 'google', ['kode-partial-args-types', 'kode-thought-signatures', 'kode-call-ids-and-image']],
  [
    'openai-responses',
    'openai-responses',
    ['kode-reasoning-summaries-phase', 'kode-parallel-calls', 'github-copilot-id-rotation.1'],
  ],
]

const prototypeKeys = () =>
  [Object.prototype, Array.prototype, Function.prototype, String.prototype].map((p) =>
    Object.getOwnPropertyNames(p).join(','),
  )

async function run(api: FramedApi, lines: readonly string[], cutAt: number | undefined) {
  let bytes = new TextEncoder().encode(frame(api, lines))
  if (cutAt !== undefined) bytes = bytes.slice(0, cutAt % (bytes.length + 1))
  const fetch = async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes)
          controller.close()
        },
      }),
      { headers: { 'content-type': 'text/event-stream' } },
    )
  const client = createClient({
    api,
    model: 'm',
    baseUrl: 'http://fake',
    fetch,
    retry: { maxAttempts: 1 },
    ...deterministic(),
  })
  return client.complete(ask())
}

/** SSE framing of each api, for payloads that may have lost their `type` (no event name then). */
function frame(api: FramedApi, lines: readonly string[]): string {
  switch (api) {
    case 'openai-chat':
    case 'openrouter':
      return `${lines.map((line) => `data: ${line}\n\n`).join('')}data: [DONE]\n\n`
    case 'google':
      return lines.map((line) => `data: ${line}\r\n\r\n`).join('')
    case 'anthropic':
    case 'openai-responses':
      return lines
        .map((line) => {
          const type = (JSON.parse(line) as { type?: unknown } | null)?.type
          return `${typeof type === 'string' && !/[\r\n]/.test(type) ? `event: ${type}\n` : ''}data: ${line}\n\n`
        })
        .join('')
    default: {
      const unknown: never = api
      throw new Error(`no framing for ${String(unknown)}`)
    }
  }
}

/** The message goes through the history codec unchanged. */
function expectValidHistory(message: AssistantMessage): void {
  const line = encodeHistoryEvent(message)
  expect(decodeHistoryEvent(line)).toEqual(JSON.parse(JSON.stringify(message)))
}

describe.each(CASES)('%s event mapper under damaged streams', (api, dir, names) => {
  const recordings = names.map((name) => fixture(dir, name))

  test('a message the history accepts, or a ProviderError; no prototype touched', async () => {
    const before = prototypeKeys()
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: recordings.length - 1 }),
        damageArb,
        fc.option(fc.nat(), { nil: undefined }),
        async (which, harm, cutAt) => {
          const lines = damage(recordings[which]!, harm)
          let outcome: unknown
          try {
            outcome = await run(api, lines, cutAt)
          } catch (thrown) {
            outcome = thrown
          }
          if (outcome instanceof Error) {
            expect(ProviderError.is(outcome), String(outcome)).toBe(true)
          } else {
            expectValidHistory(outcome as AssistantMessage)
          }
          expect(prototypeKeys()).toEqual(before)
        },
      ),
      // Bounded in time as well as runs, so a slow machine shortens the fuzz rather than failing it.
      { numRuns: 300, interruptAfterTimeLimit: 15_000 },
    )
  }, 60_000)
})
