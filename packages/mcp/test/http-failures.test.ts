import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Tool, ToolOutput } from '@kode/core'
import { type McpConnection, McpConnectionError } from '@kode/mcp'
import { afterEach, describe, expect, test } from 'vitest'
import { collect, toolResults, useHarness } from './support/harness.js'
import { call, response, say } from './support/model.js'
import { type HttpServer, startCancelHttp, startEverythingHttp, startWaitingHttp } from './support/servers.js'

const harness = useHarness()
let server: HttpServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
})

/** Far beyond any test's run: a call still waiting for its answer would be waiting for this. */
const TOOL_TIMEOUT_MS = 600_000
/** A generous bound for "promptly": a call that fails at all fails well within it. */
const PROMPTLY_MS = 20_000

/** Connects to the waiting server as `web`, recording how the connection ends. */
async function connectWeb(origin: string) {
  const web = await harness().connect({ name: 'web', url: `${origin}/mcp`, toolTimeoutMs: TOOL_TIMEOUT_MS })
  const closes: unknown[] = []
  web.onClose((error) => closes.push(error))
  return { web, closes }
}

/** `promise`'s value, or `'still waiting'` if it takes longer than `ms`. */
function within<T>(ms: number, promise: Promise<T>): Promise<T | 'still waiting'> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<'still waiting'>((resolve) => {
    timer = setTimeout(() => resolve('still waiting'), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

/** Runs `tool` directly, as the agent would, telling `onProgress` when the server reports progress. */
function execute(tool: Tool, args: Record<string, unknown>, onProgress = () => {}): Promise<ToolOutput> {
  // An MCP tool always returns a structured result.
  return tool.execute(args, {
    signal: new AbortController().signal,
    progress: onProgress,
  } as never) as Promise<ToolOutput>
}

function waitTool(web: McpConnection): Tool {
  return web.tools.find((tool) => tool.name === 'web__wait')!
}

/** The fixture's tool answering with the `Last-Event-ID` of every resumption it received, as JSON. */
function resumptionsTool(web: McpConnection): Tool {
  return web.tools.find((tool) => tool.name === 'web__resumptions')!
}

function expectClosedOnce(closes: unknown[], name = 'web'): void {
  expect(closes).toHaveLength(1)
  const [error] = closes
  expect(McpConnectionError.is(error) && [error.code, error.serverName]).toEqual(['closed', name])
  expect((error as Error).cause).toBeInstanceOf(Error)
}

const CUT = /^web__wait failed: MCP server "web" dropped the connection during a request \(.+\)$/
const UNREACHABLE = /^web__wait failed: MCP server "web" could not be reached \(.+\)$/

describe('a streamable HTTP server that dies', () => {
  test('killed during a call: the call and later calls are error results at once, and the connection is over', async () => {
    server = await startWaitingHttp()
    const h = harness()
    const { web, closes } = await connectWeb(server.origin)
    h.model.enqueue(
      response('r1', call('c1', 'web__wait', { ms: TOOL_TIMEOUT_MS })),
      response('r2', call('c2', 'web__wait', { ms: 1 })),
      response('r3', say('It died.')),
    )
    const agent = h.agent({ tools: web.tools })
    const child = server.child
    agent.events.once('tool_progress', () => child.kill('SIGKILL'))
    const run = await within(PROMPTLY_MS, collect(agent.run('go')))
    expect(run).not.toBe('still waiting')
    const results = toolResults(await agent.history())
    expect(results.c1).toMatchObject({ status: 'error', outputText: expect.stringMatching(CUT) })
    // The same words for the later call: the connection is over, as after a stdio server exits.
    expect(results.c2).toMatchObject({ status: 'error', outputText: results.c1?.outputText })
    expect(web.connected).toBe(false)
    expectClosedOnce(closes)
  })

  test('every call in flight fails, not only the first whose answer was cut off', async () => {
    server = await startWaitingHttp()
    const { web } = await connectWeb(server.origin)
    const wait = waitTool(web)
    let started = 0
    const child = server.child
    const onProgress = () => {
      if (++started === 2) child.kill('SIGKILL')
    }
    const calls = Promise.all([
      execute(wait, { ms: TOOL_TIMEOUT_MS }, onProgress),
      execute(wait, { ms: TOOL_TIMEOUT_MS }, onProgress),
    ])
    const results = await within(PROMPTLY_MS, calls)
    expect(results).not.toBe('still waiting')
    for (const result of results as ToolOutput[]) {
      expect(result).toMatchObject({ status: 'error', outputText: expect.stringMatching(CUT) })
    }
  })

  test('gone between calls: the next call is an error result saying so, and the connection is over', async () => {
    server = await startWaitingHttp()
    const { web, closes } = await connectWeb(server.origin)
    await server.stop()
    const result = await within(PROMPTLY_MS, execute(waitTool(web), { ms: 1 }))
    expect(result).toMatchObject({ status: 'error', outputText: expect.stringMatching(UNREACHABLE) })
    expect(web.connected).toBe(false)
    expectClosedOnce(closes)
    // Later calls say the same, without trying the server again.
    expect(await execute(waitTool(web), { ms: 1 })).toEqual(result)
  })

  test('a cut notification stream (GET) is not a dead server: the call in flight and later ones succeed', async () => {
    server = await startWaitingHttp()
    const { web, closes } = await connectWeb(server.origin)
    const wait = waitTool(web)
    // Answers after the cut, while the SDK is still waiting to open the stream again.
    const cut = await execute(wait, { ms: 300, dropNotifications: true })
    expect(cut).toMatchObject({ outputText: 'waited 300 ms, cut 1 stream(s)' })
    expect(cut.status).not.toBe('error')
    const later = await execute(wait, { ms: 1 })
    expect(later).toMatchObject({ outputText: 'waited 1 ms' })
    expect(web.connected).toBe(true)
    expect(closes).toEqual([])
  })
})

describe('a streamable HTTP server that ends a call’s answer stream without answering', () => {
  const UNANSWERED =
    /^web__wait failed: MCP server "web" ended the stream that was to carry the answer without sending it$/

  test('that call is an error result at once; calls beside it and after it succeed', async () => {
    server = await startWaitingHttp()
    const { web, closes } = await connectWeb(server.origin)
    const wait = waitTool(web)
    const beside = execute(wait, { ms: 500 })
    const hungUp = await within(PROMPTLY_MS, execute(wait, { ms: TOOL_TIMEOUT_MS, hangUp: true }))
    expect(hungUp).toMatchObject({ status: 'error', outputText: expect.stringMatching(UNANSWERED) })
    expect(await beside).toMatchObject({ outputText: 'waited 500 ms' })
    expect(await execute(wait, { ms: 1 })).toMatchObject({ outputText: 'waited 1 ms' })
    // The server is alive and answering: only that call is lost, not the connection.
    expect(web.connected).toBe(true)
    expect(closes).toEqual([])
  })
  test('a stream that named an event is left to resume: the answer comes over the resumed stream', async () => {
    server = await startWaitingHttp({ resumable: true })
    const { web, closes } = await connectWeb(server.origin)
    const result = await within(PROMPTLY_MS, execute(waitTool(web), { ms: 300, poll: true }))
    expect(result).toMatchObject({ outputText: 'waited 300 ms' })
    expect((result as ToolOutput).status).not.toBe('error')
    expect(web.connected).toBe(true)
    expect(closes).toEqual([])
  })

  test('a resumption the server redirects within its origin is followed, not counted as failed: the answer comes', async () => {
    server = await startWaitingHttp({ resumable: true })
    const { web, closes } = await connectWeb(server.origin)
    // As many redirects as the SDK has attempts: each followed, none is an attempt of its own.
    const result = await within(
      PROMPTLY_MS,
      execute(waitTool(web), { ms: 300, poll: true, resumeRedirects: 2 }),
    )
    expect(result).toMatchObject({ outputText: 'waited 300 ms' })
    expect((result as ToolOutput).status).not.toBe('error')
    expect(web.connected).toBe(true)
    expect(closes).toEqual([])
  })

  test('two calls whose streams are resumed at once each get their own answer', async () => {
    server = await startWaitingHttp({ resumable: true })
    const { web, closes } = await connectWeb(server.origin)
    const wait = waitTool(web)
    // Each stream is resumed from its own last event id, which the server keeps unique in the session.
    const results = await within(
      PROMPTLY_MS,
      Promise.all([execute(wait, { ms: 600, poll: true }), execute(wait, { ms: 300, poll: true })]),
    )
    expect(results).toMatchObject([{ outputText: 'waited 600 ms' }, { outputText: 'waited 300 ms' }])
    expect(web.connected).toBe(true)
    expect(closes).toEqual([])
  })

  test('a stream the server is gone before it can be resumed: once the SDK gives up, the connection is over', async () => {
    server = await startWaitingHttp({ resumable: true })
    const { web, closes } = await connectWeb(server.origin)
    const result = await within(
      PROMPTLY_MS,
      execute(waitTool(web), { ms: TOOL_TIMEOUT_MS, poll: true, thenExit: true }),
    )
    // The server may still be closing the socket of the SDK's attempt to resume when it is gone.
    expect(result).toMatchObject({
      status: 'error',
      outputText: expect.stringMatching(
        /^web__wait failed: MCP server "web" (could not be reached|dropped the connection during a request) \(.+\)$/,
      ),
    })
    expect(web.connected).toBe(false)
    expectClosedOnce(closes)
  })

  test('a stream the server refuses to resume: once the SDK gives up, that call is an error result', async () => {
    server = await startWaitingHttp({ resumable: true })
    const { web, closes } = await connectWeb(server.origin)
    const result = await within(
      PROMPTLY_MS,
      execute(waitTool(web), { ms: TOOL_TIMEOUT_MS, poll: true, refuseResume: true }),
    )
    expect(result).toMatchObject({
      status: 'error',
      outputText:
        'web__wait failed: MCP server "web" did not resume the stream that was to carry the answer (HTTP 500)',
    })
    expect(web.connected).toBe(true)
    expect(closes).toEqual([])
  })
})

describe('a stream is resumed from the event id the SDK resumes from, not from any id line', () => {
  const notSent =
    'web__wait failed: MCP server "web" ended the stream that was to carry the answer without sending it'
  const notResumed =
    'web__wait failed: MCP server "web" did not resume the stream that was to carry the answer (HTTP 500)'
  test.each([
    [
      'a stream whose only id is on an event without data names nothing to resume from: the call fails at once',
      'id-only',
      notSent,
    ],
    [
      'a stream ending with an id on an event without data is resumed from the event before: a refusal fails the call',
      'data-then-id-only',
      notResumed,
    ],
    [
      'an id with spaces around it is matched to the header resuming from it: a refusal fails the call',
      'spaced-id',
      notResumed,
    ],
  ])('%s', async (_name, rawEnd, outputText) => {
    server = await startWaitingHttp()
    const { web, closes } = await connectWeb(server.origin)
    const result = await within(PROMPTLY_MS, execute(waitTool(web), { ms: 1, rawEnd }))
    expect(result).toMatchObject({ status: 'error', outputText })
    expect(web.connected).toBe(true)
    expect(closes).toEqual([])
  })
})

describe('a stream that names an event id no HTTP header can carry', () => {
  test.each([
    ['a character above U+00FF', 'non-latin1-id'],
    ['a control character', 'control-char-id'],
  ])(
    'holding %s: the call fails at once saying so, nothing is sent to resume it, and the connection lives on',
    async (_name, rawEnd) => {
      server = await startWaitingHttp()
      const { web, closes } = await connectWeb(server.origin)
      const result = await within(PROMPTLY_MS, execute(waitTool(web), { ms: 1, rawEnd }))
      expect(result).toMatchObject({
        status: 'error',
        outputText:
          'web__wait failed: MCP server "web" ended the stream that was to carry the answer without it, naming an event id to resume it from that cannot be sent in an HTTP header',
      })
      expect(await execute(waitTool(web), { ms: 1 })).toMatchObject({ outputText: 'waited 1 ms' })
      const resumptions = resumptionsTool(web)
      expect((await execute(resumptions, {})).outputText).toBe('[]')
      expect(web.connected).toBe(true)
      expect(closes).toEqual([])
    },
  )
})

describe('a notification stream (GET) ended after an event id', () => {
  test('one a client can send back: the SDK resumes it from that id, and the connection lives on', async () => {
    server = await startWaitingHttp()
    const { web, closes } = await connectWeb(server.origin)
    const ended = await execute(waitTool(web), { ms: 1, endNotifications: 'plain-id' })
    expect(ended).toMatchObject({ outputText: 'waited 1 ms, ended 1 stream(s)' })
    const resumptions = resumptionsTool(web)
    const resumed = async () => {
      for (let i = 0; i < 100; i++) {
        const seen = (await execute(resumptions, {})).outputText
        if (seen !== '[]') return seen
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      return '[]'
    }
    expect(await resumed()).toBe('["n1"]')
    expect(web.connected).toBe(true)
    expect(closes).toEqual([])
  })

  test.each([
    ['a character above U+00FF', 'non-latin1-id'],
    ['a control character', 'control-char-id'],
  ])(
    'holding %s, which no header can carry: the connection is over at once, saying so',
    async (_name, endNotifications) => {
      server = await startWaitingHttp()
      const { web, closes } = await connectWeb(server.origin)
      const gone = new Promise((resolve) => web.onClose(resolve))
      // The call in flight fails with the connection, as calls do whenever it ends.
      const result = await within(PROMPTLY_MS, execute(waitTool(web), { ms: 2_000, endNotifications }))
      const message =
        'MCP server "web" ended the stream that carries its notifications (a changed tool list, say) naming an event id to resume it from that cannot be sent in an HTTP header: it can never be resumed, so the connection was closed'
      expect(result).toMatchObject({ status: 'error', outputText: `web__wait failed: ${message}` })
      expect(await within(PROMPTLY_MS, gone)).not.toBe('still waiting')
      expect(web.connected).toBe(false)
      expect(closes).toHaveLength(1)
      const [error] = closes
      expect(McpConnectionError.is(error) && [error.code, error.serverName, error.message]).toEqual([
        'closed',
        'web',
        message,
      ])
    },
  )
})

describe('a notification stream (GET) the SDK tries to reopen', () => {
  /** The Last-Event-ID of each attempt to reopen the stream ended at `n1`, once there are `count`. */
  async function reopenAttempts(web: McpConnection, count: number): Promise<string> {
    const resumptions = resumptionsTool(web)
    let seen = '[]'
    for (let i = 0; i < 200 && JSON.parse(seen).length < count; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      seen = (await execute(resumptions, {})).outputText
    }
    return seen
  }

  /** Long enough for the SDK, which waits 1 s then 1.5 s, to have made and given up another attempt. */
  const SDK_WOULD_RETRY_MS = 2_000

  test('answered 500 until the SDK gives up: the connection is over, and the call in flight fails saying so', async () => {
    server = await startWaitingHttp()
    const { web, closes } = await connectWeb(server.origin)
    const result = await within(
      PROMPTLY_MS,
      execute(waitTool(web), { ms: TOOL_TIMEOUT_MS, reopenAnswers: [500], endNotifications: 'plain-id' }),
    )
    const message =
      'MCP server "web" refused to reopen the stream that carries its notifications (a changed tool list, say), and the SDK gave up (HTTP 500): no more can come, so the connection was closed'
    expect(result).toMatchObject({ status: 'error', outputText: `web__wait failed: ${message}` })
    expect(web.connected).toBe(false)
    expect(closes).toHaveLength(1)
    const [error] = closes
    expect(McpConnectionError.is(error) && [error.code, error.serverName, error.message]).toEqual([
      'closed',
      'web',
      message,
    ])
  })

  test.each([
    ['to another origin, which the SDK does not follow', 302, 'http://example.invalid/mcp'],
    ['to itself, past as many redirects as the SDK follows', 307, undefined],
  ])(
    'answered with a redirect %s, until the SDK gives up: the connection is over, saying so',
    async (_name, status, reopenLocation) => {
      server = await startWaitingHttp()
      const { web, closes } = await connectWeb(server.origin)
      const result = await within(
        PROMPTLY_MS,
        execute(waitTool(web), {
          ms: TOOL_TIMEOUT_MS,
          reopenAnswers: [status],
          ...(reopenLocation === undefined ? {} : { reopenLocation }),
          endNotifications: 'plain-id',
        }),
      )
      const message = `MCP server "web" refused to reopen the stream that carries its notifications (a changed tool list, say), and the SDK gave up (HTTP ${status}, a redirect it does not follow): no more can come, so the connection was closed`
      expect(result).toMatchObject({ status: 'error', outputText: `web__wait failed: ${message}` })
      expect(web.connected).toBe(false)
      expect(closes).toHaveLength(1)
      const [error] = closes
      expect(McpConnectionError.is(error) && [error.code, error.serverName, error.message]).toEqual([
        'closed',
        'web',
        message,
      ])
    },
  )

  test('reopened through redirects the SDK follows: they are no failed attempts, and the connection lives on', async () => {
    server = await startWaitingHttp()
    const { web, closes } = await connectWeb(server.origin)
    // One failed attempt, then one followed through two redirects (each a GET resuming from n1).
    const ended = await execute(waitTool(web), {
      ms: 1,
      reopenAnswers: [500, 307, 307, 200],
      endNotifications: 'plain-id',
    })
    expect(ended).toMatchObject({ outputText: 'waited 1 ms, ended 1 stream(s)' })
    expect(await reopenAttempts(web, 4)).toBe(JSON.stringify(Array(4).fill('n1')))
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await execute(waitTool(web), { ms: 1, dropNotifications: true })).toMatchObject({
      outputText: 'waited 1 ms, cut 1 stream(s)',
    })
    expect(web.connected).toBe(true)
    expect(closes).toEqual([])
  })

  test('unreachable (the server was killed between calls): the connection is over once the SDK gives up', async () => {
    server = await startWaitingHttp()
    const { web, closes } = await connectWeb(server.origin)
    const gone = new Promise((resolve) => web.onClose(resolve))
    await server.stop()
    expect(await within(PROMPTLY_MS, gone)).not.toBe('still waiting')
    expect(web.connected).toBe(false)
    expectClosedOnce(closes)
    expect((closes[0] as Error).message).toMatch(/^MCP server "web" could not be reached \(.+\)$/)
    expect(await execute(waitTool(web), { ms: 1 })).toMatchObject({
      status: 'error',
      outputText: `web__wait failed: ${(closes[0] as Error).message}`,
    })
  })

  test.each([
    ['answered 405 (no such stream offered)', [405], 1],
    ['answered 500, then 405', [500, 405], 2],
  ])('%s: the SDK stops without a word, and the connection lives on', async (_name, reopenAnswers, count) => {
    server = await startWaitingHttp()
    const { web, closes } = await connectWeb(server.origin)
    const ended = await execute(waitTool(web), { ms: 1, reopenAnswers, endNotifications: 'plain-id' })
    expect(ended).toMatchObject({ outputText: 'waited 1 ms, ended 1 stream(s)' })
    expect(await reopenAttempts(web, count)).toBe(JSON.stringify(Array(count).fill('n1')))
    await new Promise((resolve) => setTimeout(resolve, SDK_WOULD_RETRY_MS))
    // The SDK took the 405 for its answer: it tried no more.
    expect(await reopenAttempts(web, count)).toBe(JSON.stringify(Array(count).fill('n1')))
    expect(await execute(waitTool(web), { ms: 1 })).toMatchObject({ outputText: 'waited 1 ms' })
    expect(web.connected).toBe(true)
    expect(closes).toEqual([])
  })

  test('reopened on a later attempt, each time it ends: the connection lives on, and the stream is open again', async () => {
    server = await startWaitingHttp()
    const { web, closes } = await connectWeb(server.origin)
    const wait = waitTool(web)
    // Twice, each a brief failure before the stream is back: a failure once is not counted again.
    for (const count of [2, 4]) {
      const ended = await execute(wait, { ms: 1, reopenAnswers: [500, 200], endNotifications: 'plain-id' })
      expect(ended).toMatchObject({ outputText: 'waited 1 ms, ended 1 stream(s)' })
      expect(await reopenAttempts(web, count)).toBe(JSON.stringify(Array(count).fill('n1')))
    }
    // The stream the last attempt opened is there to end.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await execute(wait, { ms: 1, dropNotifications: true })).toMatchObject({
      outputText: 'waited 1 ms, cut 1 stream(s)',
    })
    expect(web.connected).toBe(true)
    expect(closes).toEqual([])
  })
})

describe('a notification stream (GET) lost while connecting', () => {
  test.each([
    [
      'ended after an id no header can carry',
      ['endNotificationsOnList=non-latin1-id'],
      'MCP server "web" ended the stream that carries its notifications (a changed tool list, say) naming an event id to resume it from that cannot be sent in an HTTP header: it can never be resumed, so the connection was closed',
    ],
    [
      'refused until the SDK gave up reopening it',
      ['getAnswers=200,500', 'endNotificationsOnList=plain-id'],
      'MCP server "web" refused to reopen the stream that carries its notifications (a changed tool list, say), and the SDK gave up (HTTP 500): no more can come, so the connection was closed',
    ],
  ])('%s: connectMcpServer fails saying so, with a cause', async (_name, settings, message) => {
    server = await startWaitingHttp({ settings })
    // The server holds tools/list unanswered: only the lost stream can end the attempt in time.
    const connecting = harness().connect({
      name: 'web',
      url: `${server.origin}/mcp`,
      connectTimeoutMs: 30_000,
    })
    const error = await within(
      PROMPTLY_MS,
      connecting.catch((failure: unknown) => failure),
    )
    expect(McpConnectionError.is(error) && [error.code, error.serverName, error.message]).toEqual([
      'closed',
      'web',
      message,
    ])
    expect((error as Error).cause).toBeInstanceOf(Error)
  })
})

describe('a notification stream (GET) the server fails to open at first', () => {
  test('answered 500: the SDK does not retry it, and the connection lives on without it', async () => {
    server = await startWaitingHttp({ settings: ['getAnswers=500,200'] })
    const { web, closes } = await connectWeb(server.origin)
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(await execute(waitTool(web), { ms: 1 })).toMatchObject({ outputText: 'waited 1 ms' })
    // No stream was opened to cut: the SDK made its one attempt.
    expect(await execute(waitTool(web), { ms: 1, dropNotifications: true })).toMatchObject({
      outputText: 'waited 1 ms, cut 0 stream(s)',
    })
    expect(web.connected).toBe(true)
    expect(closes).toEqual([])
  })
})

describe('a streamable HTTP server that refuses to resume two calls’ streams', () => {
  test('each call is an error result once its own resumption is given up on', async () => {
    server = await startWaitingHttp({ resumable: true })
    const { web, closes } = await connectWeb(server.origin)
    const wait = waitTool(web)
    const results = await within(
      PROMPTLY_MS,
      Promise.all([
        execute(wait, { ms: TOOL_TIMEOUT_MS, poll: true, refuseResume: true }),
        execute(wait, { ms: TOOL_TIMEOUT_MS, poll: true, refuseResume: true }),
      ]),
    )
    const notResumed = {
      status: 'error',
      outputText:
        'web__wait failed: MCP server "web" did not resume the stream that was to carry the answer (HTTP 500)',
    }
    expect(results).toMatchObject([notResumed, notResumed])
    expect(web.connected).toBe(true)
    expect(closes).toEqual([])
  })
})

describe('a streamable HTTP server that answers a call’s POST with 202 and no body', () => {
  test('that call is an error result at once saying so; the connection lives on', async () => {
    server = await startWaitingHttp()
    const { web, closes } = await connectWeb(server.origin)
    const wait = waitTool(web)
    const accepted = await within(PROMPTLY_MS, execute(wait, { ms: 1, acceptOnly: true }))
    expect(accepted).toMatchObject({
      status: 'error',
      outputText:
        'web__wait failed: MCP server "web" answered the request with HTTP 202 (accepted, no answer to come), which the protocol does not allow',
    })
    expect(await execute(wait, { ms: 1 })).toMatchObject({ outputText: 'waited 1 ms' })
    expect(web.connected).toBe(true)
    expect(closes).toEqual([])
  })
})

describe('a streamable HTTP server that answers a call’s POST with an HTTP error status', () => {
  test('that call is an error result naming the status; the connection lives on', async () => {
    server = await startWaitingHttp()
    const { web, closes } = await connectWeb(server.origin)
    const wait = waitTool(web)
    for (const status of [500, 503, 429]) {
      expect(await within(PROMPTLY_MS, execute(wait, { ms: 1, httpStatus: status }))).toEqual({
        status: 'error',
        outputText: `web__wait failed: MCP server "web" answered with an error (HTTP ${status}): Streamable HTTP error: Error POSTing to endpoint: upstream unavailable`,
      })
    }
    expect(await execute(wait, { ms: 1 })).toMatchObject({ outputText: 'waited 1 ms' })
    expect(web.connected).toBe(true)
    expect(closes).toEqual([])
  })

  test('its tools/list answered 502 fails connecting with list_failed, naming the status', async () => {
    server = await startWaitingHttp({ settings: ['listStatus=502'] })
    const error = await harness()
      .connect({ name: 'web', url: `${server.origin}/mcp`, connectTimeoutMs: 30_000 })
      .catch((failure: unknown) => failure)
    expect(McpConnectionError.is(error) && [error.code, error.message]).toEqual([
      'list_failed',
      'MCP server "web" did not list its tools (HTTP 502): Streamable HTTP error: Error POSTing to endpoint: upstream unavailable',
    ])
  })
})

describe('a streamable HTTP server that forgot the session (HTTP 404 to a request naming it)', () => {
  test('the call is an error result saying so, and the connection is over, so that a host connects again', async () => {
    server = await startWaitingHttp()
    const { web, closes } = await connectWeb(server.origin)
    const wait = waitTool(web)
    expect(await execute(wait, { ms: 1, forgetSession: true })).toMatchObject({ outputText: 'waited 1 ms' })
    const message =
      'MCP server "web" no longer knows the session (HTTP 404 to a request naming it), as after a restart: the connection was closed'
    const result = await within(PROMPTLY_MS, execute(wait, { ms: 1 }))
    expect(result).toEqual({ status: 'error', outputText: `web__wait failed: ${message}` })
    expect(web.connected).toBe(false)
    expect(closes).toHaveLength(1)
    const [error] = closes
    expect(McpConnectionError.is(error) && [error.code, error.message]).toEqual(['closed', message])
  })
})

describe('an HTTP+SSE server that dies', () => {
  const LONG = 'old__trigger-long-running-operation'
  const DROPPED = new RegExp(
    `^${LONG} failed: MCP server "old" dropped the event stream that carries its answers \\(.+\\)$`,
  )

  /** Connects to the everything server over HTTP+SSE as `old`, recording how the connection ends. */
  async function connectOld() {
    server = await startEverythingHttp('sse')
    const old = await harness().connect({
      name: 'old',
      url: `${server.origin}/sse`,
      transport: 'sse',
      toolTimeoutMs: TOOL_TIMEOUT_MS,
    })
    const closes: unknown[] = []
    old.onClose((error) => closes.push(error))
    return { old, closes, long: old.tools.find((tool) => tool.name === LONG)! }
  }

  test('killed during a call: the call and later calls are error results at once, and the connection is over', async () => {
    const { old, closes, long } = await connectOld()
    const child = server!.child
    const args = { duration: 600, steps: 600 }
    const result = await within(
      PROMPTLY_MS,
      execute(long, args, () => child.kill('SIGKILL')),
    )
    expect(result).toMatchObject({ status: 'error', outputText: expect.stringMatching(DROPPED) })
    expect(await execute(long, args)).toEqual(result)
    expect(old.connected).toBe(false)
    expectClosedOnce(closes, 'old')
  })

  test('killed between calls: the connection is over at once', async () => {
    const { old, closes } = await connectOld()
    const ended = new Promise((resolve) => old.onClose(resolve))
    await server!.stop()
    expect(await within(PROMPTLY_MS, ended)).not.toBe('still waiting')
    expect(old.connected).toBe(false)
    expectClosedOnce(closes, 'old')
  })
})

describe('an HTTP+SSE server that redirects its event stream within its origin', () => {
  test('the SDK follows it, and the stream it reaches is the one whose end ends the connection', async () => {
    server = await startCancelHttp('sse')
    const old = await harness().connect({ name: 'old', url: `${server.origin}/moved`, transport: 'sse' })
    const closes: unknown[] = []
    old.onClose((error) => closes.push(error))
    const hold = old.tools.find((tool) => tool.name === 'old__hold')!
    expect(await execute(hold, { ms: 1 })).toMatchObject({ outputText: 'held 1 ms' })
    const ended = new Promise((resolve) => old.onClose(resolve))
    await server.stop()
    expect(await within(PROMPTLY_MS, ended)).not.toBe('still waiting')
    expectClosedOnce(closes, 'old')
    expect((closes[0] as Error).message).toMatch(
      /^MCP server "old" dropped the event stream that carries its answers/,
    )
  })
})

describe('an HTTP+SSE server that redirects its event stream elsewhere', () => {
  // The event stream is opened once, while connecting: after that, its end is already a loss
  // (above), so a redirect can only answer that first GET, and the connection fails saying so.
  test('to another origin, which the SDK does not follow: connecting fails, naming the redirect', async () => {
    const redirecting = createServer((_request, response) => {
      response.writeHead(302, { location: 'http://example.invalid/sse' }).end()
    })
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = redirecting.address() as AddressInfo
      const error = await within(
        PROMPTLY_MS,
        harness()
          .connect({ name: 'old', url: `http://127.0.0.1:${port}/sse`, transport: 'sse' })
          .catch((e: unknown) => e),
      )
      expect(McpConnectionError.is(error) && error.code).toBe('connect_failed')
      expect((error as Error).message).toMatch(
        /^MCP server "old" could not be reached: .*Redirect to http:\/\/example\.invalid\/sse not followed/,
      )
    } finally {
      await new Promise((resolve) => redirecting.close(resolve))
    }
  })
})
