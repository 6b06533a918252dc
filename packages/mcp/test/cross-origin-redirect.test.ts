import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Tool, ToolOutput } from '@kode/core'
import { connectMcpServer, McpConnectionError } from '@kode/mcp'
import { afterEach, describe, expect, test } from 'vitest'
import { useHarness } from './support/harness.js'
import { type HttpServer, startEverythingHttp } from './support/servers.js'

// A server that answers with a redirect to another origin (another port of 127.0.0.1 is another
// origin) must not get the credentials the host configured for it sent there, nor the request.

const harness = useHarness()
const TOKEN = 'Bearer kode-test-credential-0123456789'
const servers: Server[] = []
let everything: HttpServer | undefined
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((s) => {
      const closed = new Promise((resolve) => s.close(resolve))
      // The client's kept-alive connections would hold `close` open.
      s.closeAllConnections()
      return closed
    }),
  )
  await everything?.stop()
  everything = undefined
})

async function listen(server: Server): Promise<string> {
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** Another origin, noting every request it gets (it answers none usefully). */
async function elsewhere(): Promise<{
  origin: string
  seen: { method?: string; headers: IncomingHttpHeaders }[]
}> {
  const seen: { method?: string; headers: IncomingHttpHeaders }[] = []
  const origin = await listen(
    createServer((req, res) => {
      seen.push({ method: req.method, headers: req.headers })
      req.resume()
      res.writeHead(404).end()
    }),
  )
  return { origin, seen }
}

/** Answers every request with `status` to `target`. */
function redirecting(status: number, target: string): Server {
  return createServer((req, res) => {
    req.resume()
    res.writeHead(status, { location: target }).end()
  })
}

describe('an MCP server that redirects a POST to another origin', () => {
  for (const status of [308, 307]) {
    test(`answered ${status} at initialize: connecting fails, typed, naming the redirect; the other origin gets nothing`, async () => {
      const other = await elsewhere()
      const origin = await listen(redirecting(status, `${other.origin}/mcp`))
      const error = await connectMcpServer({
        name: 'remote',
        url: `${origin}/mcp`,
        // `auto` too: the refusal is no reason to try HTTP+SSE.
        ...(status === 308 ? { transport: 'streamable-http' as const } : {}),
        headers: { authorization: TOKEN, 'x-api-key': TOKEN },
      }).catch((e: unknown) => e)
      expect(McpConnectionError.is(error) && error.code).toBe('redirect_refused')
      expect((error as Error).message).toBe(
        `MCP server "remote" redirected its request to another origin (${other.origin}/mcp), which Kode does not follow: the headers configured for the server (its credentials) would go there. If the server has moved, set its url to the new location.`,
      )
      expect(other.seen).toEqual([])
    })
  }

  test('answered 308 to a tool call after connecting: the call fails saying so; the other origin gets nothing', async () => {
    everything = await startEverythingHttp('streamableHttp')
    const upstream = new URL(everything.origin)
    const other = await elsewhere()
    let moved = false
    // In front of the real server until it "moves": then every request is redirected elsewhere.
    const front = createServer((req, res) => {
      if (moved) {
        req.resume()
        res.writeHead(308, { location: `${other.origin}/mcp` }).end()
        return
      }
      const forward = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        },
      )
      forward.on('error', () => res.destroy())
      req.pipe(forward)
    })
    const origin = await listen(front)
    const remote = await harness().connect({
      name: 'remote',
      url: `${origin}/mcp`,
      transport: 'streamable-http',
      headers: { authorization: TOKEN },
    })
    const echo = remote.tools.find((tool) => tool.name === 'remote__echo') as Tool
    moved = true
    const result = (await echo.execute({ message: 'hi' }, {
      signal: new AbortController().signal,
      progress: () => {},
    } as never)) as ToolOutput
    expect(result.status).toBe('error')
    expect(result.outputText).toContain(`redirected its request to another origin (${other.origin}/mcp)`)
    expect(other.seen).toEqual([])
  })
})
