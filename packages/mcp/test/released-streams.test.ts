import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { RequestId } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { releaseCancelledStreams } from '../src/cancelled-streams.js'

// The record kept of each cancelled call's answer stream (to answer the SDK's attempt to resume
// it locally) is bounded: a real server on 127.0.0.1 streams the answer streams, and tells which
// resumptions reached it rather than being answered here.

let server: Server
let origin: string
/** The Last-Event-ID of every resumption that reached the server. */
let resumptions: string[]

beforeEach(async () => {
  resumptions = []
  server = createServer((request, response) => {
    const lastEventId = request.headers['last-event-id']
    if (request.method === 'GET') {
      if (typeof lastEventId === 'string') resumptions.push(lastEventId)
      response.writeHead(500).end()
      return
    }
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id?: number
        params?: { eventId?: string }
      }
      if (body.id === undefined) {
        response.writeHead(202).end()
        return
      }
      // The answer stream of a call: one event naming its id, then nothing until let go.
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      const progress = {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 1, progress: 1 },
      }
      response.write(`id: ${body.params?.eventId}\ndata: ${JSON.stringify(progress)}\n\n`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterEach(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

/** A transport's fetch that lets cancelled streams go; `waiting` holds the calls not cancelled yet. */
function client(options: { keepMs: number; max: number }) {
  const waiting = new Set<RequestId>()
  const fetchFn = releaseCancelledStreams(fetch, (ids) => ids.filter((id) => waiting.has(id)), options)
  const post = (body: object) =>
    fetchFn(`${origin}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', ...body }),
    })
  let next = 1
  return {
    /** Makes a call whose answer stream names `eventId`, then cancels it; resolves once its stream ended. */
    async cancelledCall(eventId: string): Promise<void> {
      const id = next++
      waiting.add(id)
      const response = await post({ id, method: 'tools/call', params: { eventId } })
      const reader = (response.body as ReadableStream<Uint8Array>).getReader()
      // Once the event naming the id was read, as the SDK reads it.
      await reader.read()
      waiting.delete(id)
      await post({ method: 'notifications/cancelled', params: { requestId: id } })
      while (!(await reader.read()).done) {}
    },
    /** The SDK's attempt to resume a stream: the status it gets. */
    async resume(eventId: string): Promise<number> {
      const response = await fetchFn(`${origin}/mcp`, {
        method: 'GET',
        headers: { 'last-event-id': eventId },
      })
      await response.body?.cancel()
      return response.status
    },
  }
}

describe('a cancelled call’s answer stream, let go', () => {
  test('the attempt to resume it is answered here, once: a later one reaches the server', async () => {
    const sdk = client({ keepMs: 60_000, max: 10 })
    await sdk.cancelledCall('e1')
    expect(await sdk.resume('e1')).toBe(405)
    expect(resumptions).toEqual([])
    expect(await sdk.resume('e1')).toBe(500)
    expect(resumptions).toEqual(['e1'])
  })

  test('the record of it goes after keepMs if no attempt to resume it came', async () => {
    const sdk = client({ keepMs: 100, max: 10 })
    await sdk.cancelledCall('e1')
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await sdk.resume('e1')).toBe(500)
    expect(resumptions).toEqual(['e1'])
  })

  test('at most max records are kept: the oldest goes first', async () => {
    const sdk = client({ keepMs: 60_000, max: 2 })
    for (const id of ['e1', 'e2', 'e3']) await sdk.cancelledCall(id)
    expect(await sdk.resume('e1')).toBe(500)
    expect(await sdk.resume('e2')).toBe(405)
    expect(await sdk.resume('e3')).toBe(405)
    expect(resumptions).toEqual(['e1'])
  })

  test('a stream whose id no header can carry leaves no record (it is never resumed), so none other is pushed out', async () => {
    const sdk = client({ keepMs: 60_000, max: 1 })
    await sdk.cancelledCall('e1')
    await sdk.cancelledCall('✓ 1')
    expect(await sdk.resume('e1')).toBe(405)
    expect(resumptions).toEqual([])
  })
})
