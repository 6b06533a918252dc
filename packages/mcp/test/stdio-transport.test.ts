import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, test } from 'vitest'
import { StdioClientTransport } from '../src/stdio-transport.js'
import { isAlive } from './support/servers.js'

/** A transport to `node -e script`, recording what it reports. */
function transportTo(script: string) {
  const messages: JSONRPCMessage[] = []
  const errors: Error[] = []
  let stderr = ''
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['-e', script],
    maxMessageBytes: Number.POSITIVE_INFINITY,
    onStderr: (text) => {
      stderr += text
    },
    onTooLarge: () => {},
    onMalformedAnswer: () => {},
  })
  transport.onmessage = (message) => messages.push(message)
  transport.onerror = (error) => errors.push(error)
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve
  })
  return { transport, messages, errors, closed, stderr: () => stderr }
}

describe('the stdio transport', () => {
  test('a line that is not a JSON-RPC message is reported to onerror, and reading goes on', async () => {
    const { transport, messages, errors, closed } = transportTo(
      `process.stdout.write('not json\\n{"jsonrpc":"2.0"}\\r\\n{"jsonrpc":"2.0","method":"ping","id":1}\\r\\n')`,
    )
    await transport.start()
    await closed
    expect(messages).toEqual([{ jsonrpc: '2.0', method: 'ping', id: 1 }])
    expect(errors.map((error) => error.name)).toEqual(['SyntaxError', 'ZodError'])
  })

  test('sends a message per line to stdin; close() resolves once the child is gone, after onclose', async () => {
    const { transport, messages, closed, stderr } = transportTo(
      `process.stderr.write('ready'); process.stdin.pipe(process.stdout)`,
    )
    const order: string[] = []
    void closed.then(() => order.push('onclose'))
    await transport.start()
    const pid = transport.pid!
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    while (messages.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(messages).toEqual([{ jsonrpc: '2.0', method: 'notifications/initialized' }])
    await transport.close().then(() => order.push('closed'))
    expect(order).toEqual(['onclose', 'closed'])
    expect(isAlive(pid)).toBe(false)
    expect(stderr()).toBe('ready')
    await expect(transport.send({ jsonrpc: '2.0', method: 'ping', id: 2 })).rejects.toThrow('Not connected')
  })

  test('a command that does not exist fails start() with ENOENT, and close() has nothing to stop', async () => {
    const transport = new StdioClientTransport({
      command: '/nonexistent/mcp-server',
      args: [],
      maxMessageBytes: 1_000,
      onStderr: () => {},
      onTooLarge: () => {},
      onMalformedAnswer: () => {},
    })
    transport.onerror = () => {}
    await expect(transport.start()).rejects.toMatchObject({ code: 'ENOENT' })
    expect(transport.pid).toBeUndefined()
    await transport.close()
  })
})
