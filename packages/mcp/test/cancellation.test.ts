import { getEventListeners } from 'node:events'
import type { Tool, ToolOutput } from '@kode/core'
import type { McpCommonOptions, McpConnection } from '@kode/mcp'
import { afterEach, describe, expect, test } from 'vitest'
import { collect, toolResults, useHarness } from './support/harness.js'
import { call, response, say } from './support/model.js'
import { CANCEL, type HttpServer, startCancelHttp } from './support/servers.js'

const harness = useHarness()
let server: HttpServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
})

/** Far beyond any test: a call the server is not told to stop holds on for this long. */
const HOLD_MS = 60_000
/** A bound for "at once": a cancelled call ends within it, one left waiting does not. */
const PROMPTLY_MS = 5_000

type TransportKind = 'stdio' | 'streamable-http' | 'sse'

/** What the server received: the ids of its `hold` calls, and the cancellations. */
interface Received {
  held: number[]
  cancelled: { requestId: number; reason: string }[]
  /** Streamable HTTP: the streams carrying `hold` answers still open. */
  openHolds: number
}

/** Connects the cancel server over `kind` as `srv`. */
async function connectCancel(
  kind: TransportKind,
  options: Partial<McpCommonOptions> = {},
): Promise<McpConnection> {
  if (kind === 'stdio') {
    return harness().connect({ name: 'srv', command: process.execPath, args: [CANCEL, 'stdio'], ...options })
  }
  server = await startCancelHttp(kind)
  const path = kind === 'sse' ? '/sse' : '/mcp'
  return harness().connect({
    name: 'srv',
    url: `${server.origin}${path}`,
    transport: kind,
    ...options,
  })
}

function tool(connection: McpConnection, name: string): Tool {
  return connection.tools.find((t) => t.name === `srv__${name}`)!
}

/** Runs `tool` directly, as the agent would, with `signal`. */
function execute(
  tool: Tool,
  args: Record<string, unknown>,
  options: { signal?: AbortSignal; onProgress?: () => void } = {},
): Promise<ToolOutput> {
  return tool.execute(args, {
    signal: options.signal ?? new AbortController().signal,
    progress: options.onProgress ?? (() => {}),
  } as never) as Promise<ToolOutput>
}

/** Asks the server what it received, once it has at least `atLeast` cancellations. */
async function received(connection: McpConnection, atLeast: number): Promise<Received> {
  const output = await execute(tool(connection, 'cancellations'), { atLeast })
  return JSON.parse(output.outputText) as Received
}

describe.each<TransportKind>(['stdio', 'streamable-http', 'sse'])('a call cancelled over %s', (kind) => {
  test('an interrupt sends notifications/cancelled for that request; the call ends at once as aborted', async () => {
    const h = harness()
    const srv = await connectCancel(kind)
    h.model.enqueue(response('r1', call('c1', 'srv__hold', { ms: HOLD_MS })), response('r2', say('Never.')))
    const agent = h.agent({ tools: srv.tools })
    const controller = new AbortController()
    let abortedAt = 0
    agent.events.once('tool_progress', () => {
      abortedAt = Date.now()
      controller.abort()
    })
    const { outcome } = await collect(agent.run('go', { signal: controller.signal }))
    expect(Date.now() - abortedAt).toBeLessThan(PROMPTLY_MS)
    expect(outcome.reason).toBe('aborted')
    expect(toolResults(await agent.history()).c1).toMatchObject({ status: 'aborted' })
    const { held, cancelled } = await received(srv, 1)
    expect(held).toHaveLength(1)
    expect(cancelled).toEqual([{ requestId: held[0], reason: expect.stringMatching(/abort/i) }])
    expect(srv.connected).toBe(true)
  })

  test('the time limit sends notifications/cancelled saying so; the call is a timeout error', async () => {
    const h = harness()
    const srv = await connectCancel(kind, { toolTimeoutMs: 500 })
    h.model.enqueue(response('r1', call('c1', 'srv__hold', { ms: HOLD_MS })), response('r2', say('Slow.')))
    const agent = h.agent({ tools: srv.tools })
    const started = Date.now()
    const { outcome } = await collect(agent.run('go'))
    expect(Date.now() - started).toBeLessThan(PROMPTLY_MS)
    expect(outcome.reason).toBe('completed')
    expect(toolResults(await agent.history()).c1).toMatchObject({
      status: 'error',
      outputText: 'Tool "srv__hold" timed out after 500 ms.',
    })
    const { held, cancelled } = await received(srv, 1)
    expect(cancelled).toEqual([
      { requestId: held[0], reason: expect.stringContaining('Tool "srv__hold" timed out after 500 ms.') },
    ])
  })

  test("the tool's own signal cancels the request; the call ends at once with an error saying so", async () => {
    const srv = await connectCancel(kind)
    const controller = new AbortController()
    let abortedAt = 0
    const output = await execute(
      tool(srv, 'hold'),
      { ms: HOLD_MS },
      {
        signal: controller.signal,
        onProgress: () => {
          abortedAt = Date.now()
          controller.abort(new Error('the host gave up'))
        },
      },
    )
    expect(Date.now() - abortedAt).toBeLessThan(PROMPTLY_MS)
    expect(output).toMatchObject({
      status: 'error',
      outputText: 'srv__hold was cancelled: the host gave up',
    })
    const { held, cancelled } = await received(srv, 1)
    expect(cancelled).toEqual([{ requestId: held[0], reason: 'Error: the host gave up' }])
  })

  test('an answer that comes after the cancellation is ignored, and the connection goes on', async () => {
    const answered: unknown[] = []
    const srv = await connectCancel(kind, {
      onMessage: (direction, message) => {
        if (direction === 'receive' && (message as { id?: unknown }).id !== undefined) answered.push(message)
      },
    })
    const controller = new AbortController()
    const output = await execute(
      tool(srv, 'hold'),
      { ms: 300, late: true },
      { signal: controller.signal, onProgress: () => controller.abort() },
    )
    expect(output.outputText).toMatch(/^srv__hold was cancelled/)
    const { held } = await received(srv, 1)
    const answeredLate = () => answered.some((m) => (m as { id: number }).id === held[0])
    if (kind === 'streamable-http') {
      // The stream that was to carry it was let go once the request was cancelled.
      await new Promise((resolve) => setTimeout(resolve, 800))
      expect(answeredLate()).toBe(false)
    } else {
      // The late answer arrives, and is dropped.
      await expect.poll(answeredLate, { timeout: PROMPTLY_MS }).toBe(true)
    }
    expect(srv.connected).toBe(true)
    const next = await execute(tool(srv, 'hold'), { ms: 0 })
    expect([next.status, next.outputText]).toEqual([undefined, 'held 0 ms'])
  })
})

describe.each([false, true])('over streamable HTTP (the server resumable: %s)', (resumable) => {
  test("a cancelled call's answer stream is let go, and not resumed", async () => {
    server = await startCancelHttp('streamable-http', { resumable })
    const srv = await harness().connect({ name: 'srv', url: `${server.origin}/mcp` })
    for (let i = 0; i < 3; i++) {
      const controller = new AbortController()
      await execute(
        tool(srv, 'hold'),
        { ms: HOLD_MS },
        { signal: controller.signal, onProgress: () => controller.abort() },
      )
    }
    expect((await received(srv, 3)).cancelled).toHaveLength(3)
    // A server answers a cancelled request never: left open, each stream would hold a connection
    // until close(). (The SDK tries to resume one that named event ids: 50 ms later here.)
    await new Promise((resolve) => setTimeout(resolve, 300))
    await expect.poll(async () => (await received(srv, 3)).openHolds, { timeout: PROMPTLY_MS }).toBe(0)
    const next = await execute(tool(srv, 'hold'), { ms: 0 })
    expect([next.status, next.outputText]).toEqual([undefined, 'held 0 ms'])
    expect(srv.connected).toBe(true)
  })
})

test('a call cancelled before the server opened its answer stream: the stream is let go once it opens', async () => {
  server = await startCancelHttp('streamable-http')
  const srv = await harness().connect({ name: 'srv', url: `${server.origin}/mcp` })
  const controller = new AbortController()
  setTimeout(() => controller.abort(), 100)
  const output = await execute(
    tool(srv, 'hold'),
    { ms: HOLD_MS, delayMs: 500 },
    { signal: controller.signal },
  )
  expect(output.outputText).toMatch(/^srv__hold was cancelled/)
  // The server took the call up after its cancellation arrived, so it holds on: only the client
  // can let the stream go.
  await expect.poll(async () => (await received(srv, 1)).held, { timeout: PROMPTLY_MS }).toHaveLength(1)
  await expect.poll(async () => (await received(srv, 1)).openHolds, { timeout: PROMPTLY_MS }).toBe(0)
  expect(srv.connected).toBe(true)
})

describe('a signal that outlives its requests', () => {
  test('a host signal shared by calls gains no listener from them, and cancels none once they are answered', async () => {
    const srv = await connectCancel('stdio')
    const host = new AbortController()
    for (let i = 0; i < 12; i++) {
      const output = await execute(tool(srv, 'hold'), { ms: 0 }, { signal: host.signal })
      expect(output.outputText).toBe('held 0 ms')
    }
    expect(getEventListeners(host.signal, 'abort')).toHaveLength(0)
    host.abort(new Error('the host shuts down'))
    // Over stdio, a cancellation sent on the abort would reach the server before this call.
    const { held, cancelled } = await received(srv, 0)
    expect(held).toHaveLength(12)
    expect(cancelled).toEqual([])
  })

  test("connectMcpServer's signal aborted once connected cancels nothing (initialize least of all)", async () => {
    const sent: unknown[] = []
    const life = new AbortController()
    const srv = await connectCancel('stdio', {
      signal: life.signal,
      onMessage: (direction, message) => {
        if (direction === 'send' && (message as { method?: unknown }).method === 'notifications/cancelled')
          sent.push(message)
      },
    })
    expect(getEventListeners(life.signal, 'abort')).toHaveLength(0)
    life.abort(new Error('the app exits'))
    expect(sent).toEqual([])
    expect(srv.connected).toBe(true)
    const output = await execute(tool(srv, 'hold'), { ms: 0 })
    expect(output.outputText).toBe('held 0 ms')
  })
})
