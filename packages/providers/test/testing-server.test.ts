import { fileURLToPath } from 'node:url'
import {
  createSseTestServer,
  frameChat,
  readChunksFile,
  type SseTestServer,
  splitBytes,
} from '@kode/providers/testing'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'

let server: SseTestServer
beforeEach(async () => {
  server = await createSseTestServer({ chunks: { maxBytes: 7, seed: 3 } })
})
afterEach(() => server.close())

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })

describe('createSseTestServer', () => {
  test('records method, path, lower-cased headers and the parsed JSON body', async () => {
    server.enqueue({ body: frameChat(['{}']) })
    await (await post({ model: 'm' }, { Authorization: 'Bearer k' })).text()
    expect(server.requests).toHaveLength(1)
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'm' },
      rawBody: '{"model":"m"}',
    })
    expect(server.requests[0]?.headers.authorization).toBe('Bearer k')
  })

  test('streams the scripted bytes unchanged as an event stream', async () => {
    const frames = frameChat(['{"text":"÷ — “ ok"}'])
    server.enqueue({ body: frames })
    const response = await post({})
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    expect(await response.text()).toBe(frames.join(''))
    expect(await server.ended(0)).toBe('completed')
  })

  test('answers queued responses in order, then the handler', async () => {
    server.enqueue({ status: 429, headers: { 'retry-after': '1' }, body: '{"error":{}}' })
    server.handle((request, index) => ({ status: 201, body: `${index}:${request.url}` }))
    const first = await post({})
    expect(first.status).toBe(429)
    expect(first.headers.get('retry-after')).toBe('1')
    await first.text()
    const second = await post({})
    expect([second.status, await second.text()]).toEqual([201, '1:/v1/chat/completions'])
  })

  test('without a script it answers 500 with a message that says so', async () => {
    const response = await post({})
    expect(response.status).toBe(500)
    expect(await response.text()).toContain('no scripted response for request 0')
  })

  test('resets the connection after the given number of bytes', async () => {
    server.enqueue({ body: 'x'.repeat(100), resetAfterBytes: 10 })
    const response = await post({})
    await expect(response.text()).rejects.toThrow()
    expect(await server.ended(0)).toBe('reset')
  })

  test('a stalled response keeps the connection open until the client leaves', async () => {
    server.enqueue({ body: 'data: 1\n\ndata: 2\n\n', stallAfterBytes: 9 })
    const response = await post({})
    const reader = response.body!.getReader()
    let received = ''
    while (received.length < 9) received += new TextDecoder().decode((await reader.read()).value)
    expect(received).toBe('data: 1\n\n')
    await reader.cancel()
    expect(await server.ended(0)).toBe('client_closed')
  })
})

test('splitBytes is deterministic for a seed and loses no byte', () => {
  const bytes = new TextEncoder().encode('÷'.repeat(50))
  const a = splitBytes(bytes, { maxBytes: 5, seed: 9 })
  const b = splitBytes(bytes, { maxBytes: 5, seed: 9 })
  expect(a.map((c) => c.length)).toEqual(b.map((c) => c.length))
  expect(Buffer.concat(a)).toEqual(Buffer.from(bytes))
  expect(a.every((c) => c.length >= 1 && c.length <= 5)).toBe(true)
})

test('readChunksFile returns one payload per non-empty line', () => {
  const path = fileURLToPath(new URL('./fixtures/wire/anthropic/anthropic-text.chunks.txt', import.meta.url))
  const lines = readChunksFile(path)
  expect(lines).toHaveLength(12)
  expect(lines[0]?.startsWith('{"type":"message_start"')).toBe(true)
})
