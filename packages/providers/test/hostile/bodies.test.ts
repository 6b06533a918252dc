import { describe, expect, test } from 'vitest'
import { ask, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()
const MB = 1024 * 1024
/** `size` bytes of `unit` repeated, sent in 64 kB writes. */
const huge = (unit: string, size: number): string => unit.repeat(size / unit.length)
/** Writes of up to 64 kB, one event-loop turn apart, so the client can stop the server midway. */
const slowly = { chunks: { maxBytes: 64 * 1024 }, chunkDelayMs: 1 }

describe('bodies Kode only quotes are read up to 64 kB', () => {
  test('a huge error body: read no further than the cap, quoted, said to be cut', async () => {
    server().enqueue({ status: 500, body: huge('x', 8 * MB), ...slowly })
    const client = testClient(server(), { api: 'openai-chat', model: 'gpt-4o', retry: { maxAttempts: 1 } })
    const error = (await client.complete(ask()).catch((e: unknown) => e)) as Error & {
      providerMessage: string
    }
    expect(error).toMatchObject({ status: 500, retryable: true })
    expect(error.providerMessage).toMatch(/…\s?\(cut at 65536 bytes\)$/)
    expect(error.providerMessage.length).toBeLessThan(66 * 1024)
    expect(await server().ended(0)).toBe('client_closed')
  })

  test('a huge 200 JSON body: invalid_response, not retried, with its type and size', async () => {
    server().enqueue({
      headers: { 'content-type': 'application/json' },
      body: ['{"choices":[{"message":{"content":"', huge('a', 8 * MB), '"}}]}'],
      ...slowly,
    })
    const client = testClient(server(), { api: 'openai-chat', model: 'gpt-4o' })
    const error = (await client.complete(ask()).catch((e: unknown) => e)) as Error
    expect(error).toMatchObject({ code: 'invalid_response', retryable: false })
    expect(error.message).toContain('expected an event stream, got application/json (more than 65536 bytes)')
    expect(server().requests).toHaveLength(1)
    expect(await server().ended(0)).toBe('client_closed')
  })

  test.each([
    ['text/html', 'text/html; charset=utf-8'],
    ['text/event-stream (a portal lying about its type)', 'text/event-stream'],
    ['no useful type', 'text/plain'],
  ])('an HTML page sent as 200 with %s: invalid_response, not retried', async (_, type) => {
    server().enqueue({
      headers: { 'content-type': type },
      body: '\n<!DOCTYPE html><html><body>Sign in to the Wi-Fi</body></html>',
    })
    const client = testClient(server(), { api: 'anthropic', model: 'claude-sonnet-4-5' })
    const error = (await client.complete(ask()).catch((e: unknown) => e)) as Error
    expect(error).toMatchObject({ code: 'invalid_response', retryable: false })
    expect(error.message).toContain('<!DOCTYPE html>')
    expect(server().requests).toHaveLength(1)
  })

  test.each([
    ['text/event-stream', 'text/event-stream'],
    ['text/plain', 'text/plain'],
    ['no content type', ''],
  ])(
    'a JSON error sent as 200 with %s (no data: lines): invalid_response quoting it, not retried',
    async (_, type) => {
      // What some compatible servers answer a streaming request with when it fails up front.
      const body =
        '{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}\n'
      server().enqueue({ headers: { 'content-type': type }, body, chunks: false })
      const client = testClient(server(), { api: 'openai-chat', model: 'gpt-4o' })
      const error = (await client.complete(ask()).catch((e: unknown) => e)) as Error
      expect(error).toMatchObject({ code: 'invalid_response', retryable: false })
      expect(error.message).toBe(`openai-chat: expected an event stream, got a JSON document: ${body.trim()}`)
      expect(server().requests).toHaveLength(1)
    },
  )
})

describe('responseTimeoutMs', () => {
  test('keep-alive comments forever end with a timeout at the deadline, not retried', async () => {
    // Comments every few ms keep the idle timeout from ever firing; the deadline still does.
    server().enqueue(
      streamOf('openai-chat', [], {
        body: ': keep-alive\n\n'.repeat(5_000),
        chunks: { maxBytes: 14 },
        chunkDelayMs: 2,
      }),
    )
    const client = testClient(server(), {
      api: 'openai-chat',
      model: 'gpt-4o',
      responseTimeoutMs: 150,
      idleTimeoutMs: 0,
    })
    const error = (await client.complete(ask()).catch((e: unknown) => e)) as Error
    expect(error).toMatchObject({ code: 'timeout', retryable: false })
    expect(error.message).toContain('responseTimeoutMs (150 ms)')
    expect(server().requests).toHaveLength(1)
  })
})

describe('timeouts longer than a timer can wait', () => {
  // setTimeout fires at once for a delay past 2^31 - 1 ms (about 24.8 days); a host that sets a
  // huge value to mean "practically never" must not get a timeout at once instead.
  test.each([
    ['responseTimeoutMs', { responseTimeoutMs: 2 ** 31 }],
    ['responseTimeoutMs', { responseTimeoutMs: Number.MAX_SAFE_INTEGER }],
    ['idleTimeoutMs', { idleTimeoutMs: 2 ** 32 }],
  ])('%s %#: a response that takes a moment completes', async (_name, config) => {
    server().enqueue(
      streamOf(
        'openai-chat',
        [
          '{"choices":[{"index":0,"delta":{"content":"Hi"}}]}',
          '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
        ],
        { delayMs: 30, chunkDelayMs: 30 },
      ),
    )
    const client = testClient(server(), {
      api: 'openai-chat',
      model: 'gpt-4o',
      retry: { maxAttempts: 1 },
      ...config,
    })
    const message = await client.complete(ask())
    expect(message).toMatchObject({ stopReason: 'stop', parts: [{ type: 'text', text: 'Hi' }] })
  })
})
