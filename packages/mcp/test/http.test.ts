import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connectMcpServer, McpConnectionError } from '@kode/mcp'
import { afterEach, describe, expect, test } from 'vitest'
import { collect, toolResults, useHarness } from './support/harness.js'
import { call, response, say } from './support/model.js'
import { type HttpServer, startEverythingHttp } from './support/servers.js'

const harness = useHarness()
let server: HttpServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
})

/** A fetch that records the headers of every request it sends. */
function recordingFetch(seen: Headers[]): typeof fetch {
  return (input, init) => {
    seen.push(new Headers(init?.headers))
    return fetch(input, init)
  }
}

describe('a server over HTTP', () => {
  test('streamable HTTP: tools are called with the host headers, progress arrives over the stream', async () => {
    server = await startEverythingHttp('streamableHttp')
    const h = harness()
    const seen: Headers[] = []
    const web = await h.connect({
      name: 'web',
      url: `${server.origin}/mcp`,
      headers: { authorization: 'Bearer test-token' },
      fetch: recordingFetch(seen),
    })
    expect(web.transport).toBe('streamable-http')
    expect(web.pid).toBeUndefined()
    h.model.enqueue(
      response(
        'r1',
        call('c1', 'web__get-sum', { a: 2, b: 3 }),
        call('c2', 'web__trigger-long-running-operation', { duration: 1, steps: 2 }),
      ),
      response('r2', say('Five.')),
    )
    const agent = h.agent({ tools: web.tools })
    const { events, outcome } = await collect(agent.run('add'))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Five.' })
    const results = toolResults(await agent.history())
    expect(results.c1).toMatchObject({ status: 'success', outputText: 'The sum of 2 and 3 is 5.' })
    expect(results.c2).toMatchObject({ status: 'success' })
    expect(events.some((e) => e.type === 'tool_progress' && e.message === '1/2')).toBe(true)
    expect(seen.length).toBeGreaterThan(2)
    expect(seen.every((headers) => headers.get('authorization') === 'Bearer test-token')).toBe(true)
  })

  test('an older HTTP+SSE server is reached through the fallback', async () => {
    server = await startEverythingHttp('sse')
    const h = harness()
    const old = await h.connect({ name: 'old', url: `${server.origin}/sse` })
    expect(old.transport).toBe('sse')
    h.model.enqueue(
      response('r1', call('c1', 'old__echo', { message: 'over sse' })),
      response('r2', say('Ok.')),
    )
    const agent = h.agent({ tools: old.tools })
    await collect(agent.run('echo'))
    expect(toolResults(await agent.history()).c1).toMatchObject({
      status: 'success',
      outputText: 'Echo: over sse',
    })
  })

  test('a url neither transport is served at: the error quotes both attempts, not only the fallback', async () => {
    server = await startEverythingHttp('streamableHttp')
    const error = await connectMcpServer({ name: 'typo', url: `${server.origin}/wrong` }).catch(
      (e: unknown) => e,
    )
    expect(McpConnectionError.is(error) && [error.code, error.serverName]).toEqual(['connect_failed', 'typo'])
    expect((error as Error).message).toMatch(
      /^MCP server "typo" could not be connected over streamable HTTP \(HTTP 404: Streamable HTTP error: Error POSTing to endpoint: .*Cannot POST \/wrong.*\) nor over HTTP\+SSE \(SSE error: Non-200 status code \(404\)\)$/s,
    )
  })

  test('a server that went away is a typed connect_failed error saying why (fetch alone says "fetch failed")', async () => {
    server = await startEverythingHttp('streamableHttp')
    const { origin } = server
    await server.stop()
    const error = await connectMcpServer({ name: 'gone', url: `${origin}/mcp` }).catch((e: unknown) => e)
    expect(McpConnectionError.is(error) && [error.code, error.serverName]).toEqual(['connect_failed', 'gone'])
    expect((error as Error).message).toMatch(
      /^MCP server "gone" could not be reached: fetch failed: connect ECONNREFUSED 127\.0\.0\.1:\d+$/,
    )
  })

  test('a server that refuses initialize with an HTTP error status: connect_failed names the status', async () => {
    const refusing = createServer((request, reply) => {
      request.resume()
      const status = request.url === '/busy' ? 503 : 401
      reply
        .writeHead(status, { 'content-type': 'text/plain' })
        .end(status === 503 ? 'overloaded' : 'no entry')
    })
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = refusing.address() as AddressInfo
      for (const [path, status, said] of [
        ['/mcp', 401, 'no entry'],
        ['/busy', 503, 'overloaded'],
      ] as const) {
        const error = await connectMcpServer({ name: 'shut', url: `http://127.0.0.1:${port}${path}` }).catch(
          (e: unknown) => e,
        )
        expect(McpConnectionError.is(error) && error.code).toBe('connect_failed')
        expect((error as Error).message).toBe(
          `MCP server "shut" refused the connection (HTTP ${status}): Streamable HTTP error: Error POSTing to endpoint: ${said}`,
        )
      }
    } finally {
      await new Promise((resolve) => refusing.close(resolve))
    }
  })
})
