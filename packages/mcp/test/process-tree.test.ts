import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Tool, ToolOutput } from '@kode/core'
import { connectMcpServer, type McpConnection } from '@kode/mcp'
import { afterEach, describe, expect, onTestFinished, test } from 'vitest'
import { bundleForNode } from '../../../test/children/bundle-for-node.js'
import { isAlive } from './support/servers.js'

const SCRIPTED = fileURLToPath(new URL('./fixtures/scripted-server.mjs', import.meta.url))
const STUBBORN = fileURLToPath(new URL('./support/stubborn.cjs', import.meta.url))
const EXITING_HOST = fileURLToPath(new URL('./support/exiting-host.ts', import.meta.url))
const TOOLS = JSON.stringify([{ name: 'say', inputSchema: { type: 'object' } }])

/** Processes a test started, killed after it if still there so that a failure leaks nothing. */
let pids: number[] = []
let connection: McpConnection | undefined
afterEach(async () => {
  await connection?.close()
  connection = undefined
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Gone, as it should be.
    }
  }
  pids = []
})

/** Connects a server started with `nodeArgs` that starts a helper sharing its stdout and stderr. */
async function withHelper(nodeArgs: readonly string[], results: Record<string, unknown> = {}) {
  let said = ''
  let heard: (pid: number) => void = () => {}
  const helperSaid = new Promise<number>((resolve) => {
    heard = resolve
  })
  connection = await connectMcpServer({
    name: 'tree',
    command: process.execPath,
    args: [...nodeArgs, SCRIPTED, TOOLS, JSON.stringify(results), 'helper'],
    onStderr: (text) => {
      said += text
      const helper = /helper=(\d+)/.exec(said)?.[1]
      if (helper) heard(Number(helper))
    },
  })
  const server = connection.pid!
  const helper = await helperSaid
  pids.push(helper, server)
  expect([isAlive(server), isAlive(helper)]).toEqual([true, true])
  return { connection, server, helper }
}

function execute(tool: Tool): Promise<ToolOutput> {
  return tool.execute({}, {
    signal: new AbortController().signal,
    progress: () => {},
  } as never) as Promise<ToolOutput>
}

describe('close() stops the server with the processes it started', () => {
  test('a helper the server started is gone once close() resolves', async () => {
    const { connection, server, helper } = await withHelper([])
    await connection.close()
    expect([isAlive(server), isAlive(helper)]).toEqual([false, false])
  })

  test('a server that ignores SIGTERM and its stdin closing is killed, with its helper', async () => {
    const { connection, server, helper } = await withHelper(['--require', STUBBORN])
    const started = Date.now()
    await connection.close()
    expect([isAlive(server), isAlive(helper)]).toEqual([false, false])
    // stdin closed, SIGTERM after 2 s, SIGKILL 2 s later.
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_900)
  }, 20_000)

  test('a host that exits without close() stops the server and its helper', async () => {
    // The SDK and cross-spawn are CommonJS inside: left to Node, from this package's node_modules.
    const host = await bundleForNode(EXITING_HOST, {
      external: ['@modelcontextprotocol/sdk', 'cross-spawn'],
      packageDir: fileURLToPath(new URL('..', import.meta.url)),
    })
    onTestFinished(() => rmSync(dirname(host), { recursive: true, force: true }))
    const child = spawn(process.execPath, [host, SCRIPTED], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    const code = await new Promise((resolve) => child.once('exit', resolve))
    const [server, helper] = [/server=(\d+)/, /helper=(\d+)/].map((re) => Number(re.exec(out)?.[1]))
    pids.push(server!, helper!)
    expect(code).toBe(0)
    expect(server).toBeGreaterThan(0)
    expect(helper).toBeGreaterThan(0)
    for (let waited = 0; waited < 3_000 && (isAlive(server!) || isAlive(helper!)); waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect([isAlive(server!), isAlive(helper!)]).toEqual([false, false])
  }, 30_000)
})

describe('a server that exits by itself', () => {
  test('the helper it started (seen while it ran) is stopped too', async () => {
    const { connection, server, helper } = await withHelper([], { say: { exit: 1 } })
    const ended = new Promise((resolve) => connection.onClose(resolve))
    expect(await execute(connection.tools[0]!)).toMatchObject({ status: 'error' })
    await ended
    // SIGTERM 200 ms after the exit (time for the server's last words), which the helper obeys.
    for (let waited = 0; waited < 5_000 && isAlive(helper); waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect([isAlive(server), isAlive(helper)]).toEqual([false, false])
  }, 15_000)

  test('a helper it started between requests is stopped too', async () => {
    let said = ''
    connection = await connectMcpServer({
      name: 'tree',
      command: process.execPath,
      args: [SCRIPTED, TOOLS, JSON.stringify({ say: { later: { helperAfterMs: 200, exitAfterMs: 2_500 } } })],
      onStderr: (text) => {
        said += text
      },
    })
    const server = connection.pid!
    pids.push(server)
    const ended = new Promise((resolve) => connection!.onClose(resolve))
    expect(await execute(connection.tools[0]!)).toMatchObject({ outputText: 'later' })
    await expect.poll(() => /later-helper=(\d+)/.exec(said)?.[1], { timeout: 5_000 }).toBeDefined()
    const helper = Number(/later-helper=(\d+)/.exec(said)?.[1])
    pids.push(helper)
    expect(isAlive(helper)).toBe(true)
    // No request after the helper started: the server exits by itself, idle.
    await ended
    for (let waited = 0; waited < 5_000 && isAlive(helper); waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect([isAlive(server), isAlive(helper)]).toEqual([false, false])
  }, 20_000)
})

describe('large messages over stdio', () => {
  test('a 30 MiB answer is read whole', async () => {
    // Its line arrives in many chunks, joined once at its end (joining them as each arrived took
    // about 6 s here, against 0.3 s); how long it takes is not asserted, since a busy machine
    // makes any limit flaky.
    const length = 30 * 1024 * 1024
    connection = await connectMcpServer({
      name: 'big',
      command: process.execPath,
      args: [SCRIPTED, TOOLS, JSON.stringify({ say: { long: length } })],
    })
    const output = await execute(connection.tools[0]!)
    expect(output.outputText?.length).toBe(length)
    expect(output.outputText === 'a'.repeat(length)).toBe(true)
  })
})
