import { fileURLToPath } from 'node:url'
import type { Tool, ToolOutput } from '@kode/core'
import { connectMcpServer, MCP_DEFAULTS, type McpConnection, McpConnectionError } from '@kode/mcp'
import { afterEach, describe, expect, test } from 'vitest'
import { useHarness } from './support/harness.js'
import { type HttpServer, isAlive, startWaitingHttp } from './support/servers.js'

const harness = useHarness()
const SCRIPTED = fileURLToPath(new URL('./fixtures/scripted-server.mjs', import.meta.url))
let server: HttpServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
})

const LIMIT = 64 * 1024

/** A bare stdio server whose `say` tool answers with `length` characters, and whose `flood` tool never ends its line. */
function scripted(length: number, maxMessageBytes?: number) {
  const tools = [
    { name: 'say', inputSchema: { type: 'object' } },
    { name: 'flood', inputSchema: { type: 'object' } },
  ]
  const results = { say: { long: length }, flood: { flood: 4 * LIMIT } }
  return {
    name: 'big',
    command: process.execPath,
    args: [SCRIPTED, JSON.stringify(tools), JSON.stringify(results)],
    ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
  }
}

function tool(connection: McpConnection, name: string): Tool {
  return connection.tools.find((candidate) => candidate.name === name)!
}

/** Runs `tool` as the agent would; an MCP tool always returns a structured result. */
function execute(tool: Tool, args: Record<string, unknown> = {}): Promise<ToolOutput> {
  return tool.execute(args, {
    signal: new AbortController().signal,
    progress: () => {},
  } as never) as Promise<ToolOutput>
}

function expectTooLarge(error: unknown, serverName: string): void {
  expect(McpConnectionError.is(error) && [error.code, error.serverName]).toEqual([
    'message_too_large',
    serverName,
  ])
  expect((error as Error).message).toBe(
    `MCP server "${serverName}" sent a message larger than ${LIMIT} bytes (maxMessageBytes); the connection was closed`,
  )
}

describe('maxMessageBytes over stdio', () => {
  test('an answer within the limit is read whole', async () => {
    const big = await harness().connect(scripted(LIMIT - 1_000, LIMIT))
    const output = await execute(tool(big, 'big__say'))
    expect(output).toEqual({ outputText: 'a'.repeat(LIMIT - 1_000) })
  })

  test('a line that never ends closes the connection; the call and later ones fail saying why', async () => {
    const big = await harness().connect(scripted(4, LIMIT))
    const closes: unknown[] = []
    big.onClose((error) => closes.push(error))
    const pid = big.pid!
    const flooded = await execute(tool(big, 'big__flood'))
    expect(flooded.status).toBe('error')
    expect(flooded.outputText).toContain(`sent a message larger than ${LIMIT} bytes (maxMessageBytes)`)
    const later = await execute(tool(big, 'big__say'))
    // The same words, for its own tool: the connection is over, as after a stdio server exits.
    expect(later).toEqual({
      status: 'error',
      outputText: flooded.outputText?.replace('big__flood', 'big__say'),
    })
    expect(big.connected).toBe(false)
    expect(closes).toHaveLength(1)
    expectTooLarge(closes[0], 'big')
    await big.close()
    expect(isAlive(pid)).toBe(false)
  })

  test('an answer over the limit fails the same way', async () => {
    const big = await harness().connect(scripted(LIMIT + 1, LIMIT))
    const output = await execute(tool(big, 'big__say'))
    expect(output.status).toBe('error')
    expect(output.outputText).toContain(`sent a message larger than ${LIMIT} bytes`)
    expect(big.connected).toBe(false)
  })

  test('the default limit is 32 MiB: a 12 MiB answer is read', async () => {
    expect(MCP_DEFAULTS.maxMessageBytes).toBe(32 * 1024 * 1024)
    const length = 12 * 1024 * 1024
    const big = await harness().connect(scripted(length))
    const output = await execute(tool(big, 'big__say'))
    expect(output.status).toBeUndefined()
    expect(output.outputText).toHaveLength(length)
    expect(output.outputText).toBe('a'.repeat(length))
  })
})

describe('maxMessageBytes over streamable HTTP', () => {
  test('an answer within the limit is read; one over it closes the connection', async () => {
    server = await startWaitingHttp()
    const web = await harness().connect({ name: 'web', url: `${server.origin}/mcp`, maxMessageBytes: LIMIT })
    const closes: unknown[] = []
    web.onClose((error) => closes.push(error))
    const wait = tool(web, 'web__wait')
    const small = await execute(wait, { ms: 1, pad: LIMIT / 2 })
    expect(small).toEqual({ outputText: `waited 1 ms${' '.repeat(LIMIT / 2)}` })
    const large = await execute(wait, { ms: 1, pad: LIMIT })
    expect(large.status).toBe('error')
    expect(large.outputText).toContain(`sent a message larger than ${LIMIT} bytes (maxMessageBytes)`)
    expect(web.connected).toBe(false)
    expect(closes).toHaveLength(1)
    expectTooLarge(closes[0], 'web')
  })
})

describe('the option is checked', () => {
  test.each([0, -1, 1.5, Number.NaN, '1000'])('maxMessageBytes %s is refused', async (value) => {
    const error = await connectMcpServer({
      name: 'bad',
      command: process.execPath,
      maxMessageBytes: value as number,
    }).catch((e: unknown) => e)
    expect(McpConnectionError.is(error) && error.code).toBe('invalid_options')
    expect((error as Error).message).toBe(
      'MCP server "bad" has an invalid maxMessageBytes (a positive whole number of bytes, or Infinity)',
    )
  })
})
