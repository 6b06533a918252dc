import { connectMcpServer, type McpConnection } from '@kode/mcp'
import { afterEach, describe, expect, test } from 'vitest'
import { everythingStdio, isAlive } from './support/servers.js'

let connection: McpConnection | undefined
afterEach(async () => {
  await connection?.close()
  connection = undefined
})

describe('a stdio server', () => {
  test('its tools become Kode tools named with the server prefix, with the server schema', async () => {
    connection = await connectMcpServer(everythingStdio())
    expect(connection.transport).toBe('stdio')
    expect(connection.server.name).toBe('mcp-servers/everything')
    const names = connection.tools.map((t) => t.name)
    expect(names).toEqual(
      expect.arrayContaining(['everything__echo', 'everything__get-sum', 'everything__get-tiny-image']),
    )
    // A tool that only runs as an MCP task is not offered.
    expect(names).not.toContain('everything__simulate-research-query')
    const echo = connection.tools.find((t) => t.name === 'everything__echo')!
    expect(echo.description).toBe('Echoes back the input string')
    expect(JSON.parse(JSON.stringify(echo.parameters))).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
    })
    expect(connection.toolInfo.find((t) => t.name === 'everything__echo')).toMatchObject({
      serverToolName: 'echo',
    })
  })

  test('arguments are checked against the server JSON Schema before any call', async () => {
    connection = await connectMcpServer(everythingStdio())
    const sum = connection.tools.find((t) => t.name === 'everything__get-sum')!
    expect(sum.parseArguments('{"a":1,"b":2}')).toEqual({ ok: true, args: { a: 1, b: 2 } })
    const bad = sum.parseArguments('{"a":"one"}')
    expect(bad.ok).toBe(false)
    expect(!bad.ok && bad.error).toMatch(/must be number/)
    expect(!bad.ok && bad.error).toMatch(/must have required property 'b'/)
  })

  test('close() stops the child process and waits until it is gone', async () => {
    connection = await connectMcpServer(everythingStdio())
    const pid = connection.pid!
    expect(isAlive(pid)).toBe(true)
    await connection.close()
    expect(isAlive(pid)).toBe(false)
    expect(connection.connected).toBe(false)
    await connection.close()
  })
  test('an onStderr that throws does not crash the host; the server stays usable', async () => {
    let heard = ''
    connection = await connectMcpServer({
      ...everythingStdio(),
      onStderr: (text: string) => {
        heard += text
        throw new Error('a bug in the host logger')
      },
    })
    const echo = connection.tools.find((tool) => tool.name === 'everything__echo')!
    const result = await echo.execute({ message: 'hi' }, {
      signal: new AbortController().signal,
      progress: () => undefined,
    } as never)
    expect(heard).toContain('Starting')
    expect(result).toMatchObject({ outputText: 'Echo: hi' })
  })
})
