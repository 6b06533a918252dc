import { createServer, type Server } from 'node:http'
import { fileURLToPath } from 'node:url'
import { inspect } from 'node:util'
import { connectMcpServer, McpConnectionError } from '@kode/mcp'
import { afterEach, describe, expect, test } from 'vitest'
import { collect, toolResults, useHarness } from './support/harness.js'
import { call, response, say } from './support/model.js'

// "Never printed or persisted by Kode": a server that echoes the credential the host gave it
// (in a 401 body, on stderr, in a JSON-RPC error) does not get it into an error, a tool result
// kept in the history, or the next request to the model.

const harness = useHarness()
const SCRIPTED = fileURLToPath(new URL('./fixtures/scripted-server.mjs', import.meta.url))
const TOKEN = 'ghp_secretToken0123456789abcdef'

const printed = (error: unknown) => [String(error), inspect(error, { depth: 20 }), JSON.stringify(error)]

let http: Server | undefined
afterEach(async () => {
  await new Promise((resolve) => (http ? http.close(resolve) : resolve(undefined)))
  http = undefined
})

/** An HTTP server on 127.0.0.1 that refuses every request, quoting the Authorization it got. */
async function echoingServer(): Promise<string> {
  http = createServer((req, res) => {
    req.resume()
    res
      .writeHead(401, { 'content-type': 'text/plain' })
      .end(`invalid credentials: ${req.headers.authorization}`)
  })
  await new Promise<void>((resolve) => http!.listen(0, '127.0.0.1', resolve))
  const { port } = http.address() as { port: number }
  return `http://127.0.0.1:${port}/mcp`
}

describe('credentials given to an MCP server never come back in what Kode prints or keeps', () => {
  test('an HTTP server quoting the Authorization header in its 401', async () => {
    const url = await echoingServer()
    const error = await connectMcpServer({
      name: 'remote',
      url,
      transport: 'streamable-http',
      headers: { authorization: `Bearer ${TOKEN}` },
    }).catch((e: unknown) => e)
    expect(McpConnectionError.is(error) && error.code).toBe('connect_failed')
    expect((error as Error).message).toContain('invalid credentials: [redacted]')
    for (const text of printed(error)) expect(text).not.toContain(TOKEN)
  })

  test('a stdio server writing a credential of its env to stderr as it exits', async () => {
    const error = await connectMcpServer({
      name: 'gh',
      command: process.execPath,
      args: ['-e', "console.error('bad credentials: ' + process.env.GITHUB_TOKEN); process.exit(1)"],
      env: { GITHUB_TOKEN: TOKEN },
    }).catch((e: unknown) => e)
    expect(McpConnectionError.is(error) && error.code).toBe('closed')
    expect((error as Error).message).toContain('bad credentials: [redacted]')
    for (const text of printed(error)) expect(text).not.toContain(TOKEN)
  })

  test('a stdio server whose stderr quoted under errors starts in the middle of a credential', async () => {
    // The end of stderr kept for errors (4,000 characters) starts inside the token: its tail is
    // no longer the credential redaction looks for.
    const error = await connectMcpServer({
      name: 'gh',
      command: process.execPath,
      args: [
        '-e',
        "console.error('config: token=' + process.env.GITHUB_TOKEN + '\\n' + 'x'.repeat(3985)); process.exit(1)",
      ],
      env: { GITHUB_TOKEN: TOKEN },
    }).catch((e: unknown) => e)
    expect(McpConnectionError.is(error) && error.code).toBe('closed')
    expect((error as Error).message).toContain('x'.repeat(3985))
    for (const text of printed(error)) expect(text).not.toContain(TOKEN.slice(-10))
  })

  test.each([['--token', TOKEN], [`--api-key=${TOKEN}`]])(
    'a stdio server given a credential on its command line (%s) writing it to stderr',
    async (...flag) => {
      const error = await connectMcpServer({
        name: 'gh',
        command: process.execPath,
        args: [
          '-e',
          "console.error('bad credentials: ' + process.argv.slice(1).join(' ')); process.exit(1)",
          '--',
          ...flag,
          '--verbose',
        ],
      }).catch((e: unknown) => e)
      expect(McpConnectionError.is(error) && error.code).toBe('closed')
      expect((error as Error).message).toContain('bad credentials: ')
      expect((error as Error).message).toContain('[redacted] --verbose')
      for (const text of printed(error)) expect(text).not.toContain(TOKEN)
    },
  )

  test('a refresh of the tool list failing with an error that quotes the credential', async () => {
    const gh = await connectMcpServer({
      name: 'gh',
      command: process.execPath,
      args: [
        SCRIPTED,
        JSON.stringify([{ name: 'issues', inputSchema: { type: 'object' } }]),
        '{}',
        'relist-error',
      ],
      env: { GITHUB_TOKEN: TOKEN },
    })
    try {
      const error = await gh.refresh().catch((e: unknown) => e)
      expect(String(error)).toContain('token [redacted] was revoked')
      for (const text of printed(error)) expect(text).not.toContain(TOKEN)
    } finally {
      await gh.close()
    }
  })

  test('a tool call failing with an error that quotes the credential: not in the history or the model request', async () => {
    const h = harness()
    const gh = await h.connect({
      name: 'gh',
      command: process.execPath,
      args: [
        SCRIPTED,
        JSON.stringify([{ name: 'issues', inputSchema: { type: 'object' } }]),
        JSON.stringify({ issues: { error: { code: -32001, message: `GitHub rejected token ${TOKEN}` } } }),
      ],
      env: { GITHUB_TOKEN: TOKEN },
    })
    h.model.enqueue(response('r1', call('c1', 'gh__issues', {})), response('r2', say('Sorry.')))
    const agent = h.agent({ tools: gh.tools })
    const { events } = await collect(agent.run('list issues'))
    const result = toolResults(await agent.history()).c1
    expect(result).toMatchObject({ status: 'error' })
    expect(result?.outputText).toContain('GitHub rejected token [redacted]')
    expect(JSON.stringify(await agent.history())).not.toContain(TOKEN)
    expect(JSON.stringify(events)).not.toContain(TOKEN)
    expect(JSON.stringify(h.model.requests.map((r) => r.body))).not.toContain(TOKEN)
  })

  test('a tool result marked isError that quotes the credential: not in the history or the model request', async () => {
    const h = harness()
    const gh = await h.connect({
      name: 'gh',
      command: process.execPath,
      args: [
        SCRIPTED,
        JSON.stringify([{ name: 'issues', inputSchema: { type: 'object' } }]),
        JSON.stringify({
          issues: {
            content: [{ type: 'text', text: `GitHub rejected token ${TOKEN}` }],
            structuredContent: { error: `bad token ${TOKEN}` },
            isError: true,
          },
        }),
      ],
      env: { GITHUB_TOKEN: TOKEN },
    })
    h.model.enqueue(response('r1', call('c1', 'gh__issues', {})), response('r2', say('Sorry.')))
    const agent = h.agent({ tools: gh.tools })
    const { events } = await collect(agent.run('list issues'))
    const result = toolResults(await agent.history()).c1
    expect(result).toMatchObject({ status: 'error', outputText: 'GitHub rejected token [redacted]' })
    expect(JSON.stringify(await agent.history())).not.toContain(TOKEN)
    expect(JSON.stringify(events)).not.toContain(TOKEN)
    expect(JSON.stringify(h.model.requests.map((r) => r.body))).not.toContain(TOKEN)
  })

  test('progress the server reports quoting the credential: not in the events or the history', async () => {
    const h = harness()
    const gh = await h.connect({
      name: 'gh',
      command: process.execPath,
      args: [
        SCRIPTED,
        JSON.stringify([{ name: 'sync', inputSchema: { type: 'object' } }]),
        JSON.stringify({
          sync: { progressThen: [{ progress: 1, total: 2, message: `signed in as ${TOKEN}` }] },
        }),
      ],
      env: { GITHUB_TOKEN: TOKEN },
    })
    h.model.enqueue(response('r1', call('c1', 'gh__sync', {})), response('r2', say('Synced.')))
    const agent = h.agent({ tools: gh.tools })
    const { events } = await collect(agent.run('sync'))
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'tool_progress', message: '1/2 signed in as [redacted]' }),
    )
    expect(JSON.stringify(events)).not.toContain(TOKEN)
    expect(JSON.stringify(await agent.history())).not.toContain(TOKEN)
  })
})
