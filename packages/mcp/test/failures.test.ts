import { fileURLToPath } from 'node:url'
import { connectMcpServer, McpConnectionError } from '@kode/mcp'
import { describe, expect, test, vi } from 'vitest'
import { collect, toolResults, useHarness } from './support/harness.js'
import { call, response, say } from './support/model.js'
import { EVERYTHING, everythingStdio, isAlive } from './support/servers.js'

const harness = useHarness()
const STUBBORN = fileURLToPath(new URL('./support/stubborn.cjs', import.meta.url))
const SCRIPTED = fileURLToPath(new URL('./fixtures/scripted-server.mjs', import.meta.url))

/** The options of a bare server listing `tools` as they are, however odd. */
function scripted(tools: readonly Record<string, unknown>[], results: Record<string, unknown> = {}) {
  return {
    name: 'odd',
    command: process.execPath,
    args: [SCRIPTED, JSON.stringify(tools), JSON.stringify(results)],
  }
}

/** A process that starts and then never says a word: a hung server. It writes its pid to stderr. */
const HUNG = ['-e', 'process.stderr.write(String(process.pid)); process.stdin.resume()']

async function failure(promise: Promise<unknown>): Promise<McpConnectionError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!McpConnectionError.is(error)) throw new Error(`expected an McpConnectionError, got ${String(error)}`)
  return error
}

describe('connection failures are typed errors, and leave no process behind', () => {
  test('a command that does not exist', async () => {
    const error = await failure(connectMcpServer({ name: 'ghost', command: '/nonexistent/mcp-server' }))
    expect([error.code, error.serverName]).toEqual(['spawn_failed', 'ghost'])
    expect(error.message).toMatch(/^MCP server "ghost" could not be started: .*ENOENT/)
  })

  test('a working directory that does not exist is named, not taken for a missing command', async () => {
    const error = await failure(
      connectMcpServer({
        name: 'lost',
        command: process.execPath,
        args: ['-e', ''],
        cwd: '/nonexistent/dir',
      }),
    )
    expect([error.code, error.serverName]).toEqual(['spawn_failed', 'lost'])
    expect(error.message).toBe(
      'MCP server "lost" could not be started: its working directory (cwd) /nonexistent/dir is not a directory',
    )
  })

  test('a server that never answers initialize', async () => {
    let pid = ''
    const error = await failure(
      connectMcpServer({
        name: 'hung',
        command: process.execPath,
        args: HUNG,
        connectTimeoutMs: 500,
        onStderr: (text) => {
          pid += text
        },
      }),
    )
    expect(error.code).toBe('initialize_timeout')
    expect(error.message).toBe(
      'MCP server "hung" did not get ready within 500 ms (no answer to initialize or tools/list)',
    )
    expect(isAlive(Number(pid))).toBe(false)
  })

  test('a server that exits before answering quotes its stderr', async () => {
    const error = await failure(
      connectMcpServer({
        name: 'broken',
        command: process.execPath,
        args: ['-e', 'console.error("fatal: missing API token"); process.exit(3)'],
      }),
    )
    expect(error.code).toBe('closed')
    expect(error.message).toBe(
      'MCP server "broken" closed the connection before answering initialize; its stderr ends: fatal: missing API token',
    )
  })

  test('a server answering initialize with a generic error (-32000) is quoted, not taken for a closed connection', async () => {
    const error = await failure(connectMcpServer({ ...scripted([]), args: [SCRIPTED, '[]', '{}', 'refuse'] }))
    expect(error.code).toBe('connect_failed')
    expect(error.message).toBe(
      'MCP server "odd" answered initialize with an error: MCP error -32000: missing API token',
    )
  })

  test('a server speaking only a protocol version Kode does not: connect_failed says so, not "could not be reached"', async () => {
    const answer =
      "process.stdin.on('data', (data) => { for (const line of String(data).split('\\n').filter(Boolean)) {" +
      ' const { id, method } = JSON.parse(line);' +
      " if (method === 'initialize') process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result:" +
      " { protocolVersion: '1999-01-01', capabilities: {}, serverInfo: { name: 'old', version: '1' } } }) + '\\n') } })"
    const error = await failure(
      connectMcpServer({ name: 'ancient', command: process.execPath, args: ['-e', answer] }),
    )
    expect(error.code).toBe('connect_failed')
    expect(error.message).toMatch(
      /^MCP server "ancient" answered initialize with protocol version 1999-01-01, which Kode does not speak \(it speaks \d{4}-\d\d-\d\d(, \d{4}-\d\d-\d\d)*\)$/,
    )
  })

  test('aborting the attempt stops the server it started', async () => {
    let pid = ''
    const controller = new AbortController()
    const attempt = connectMcpServer({
      name: 'hung',
      command: process.execPath,
      args: HUNG,
      signal: controller.signal,
      onStderr: (text) => {
        pid += text
        controller.abort()
      },
    })
    const error = await failure(attempt)
    expect(error.code).toBe('aborted')
    expect(isAlive(Number(pid))).toBe(false)
  })

  test('options naming no server, or two, are refused', async () => {
    const neither = await failure(connectMcpServer({ name: 'x' } as never))
    expect([neither.code, neither.message]).toEqual([
      'invalid_options',
      'MCP server "x" needs either a command (stdio) or a url (HTTP), not neither',
    ])
    const unnamed = await failure(connectMcpServer({ name: '', command: 'node' }))
    expect(unnamed.code).toBe('invalid_options')
  })

  test.each([0, -1, Number.NaN])('a connectTimeoutMs of %s is refused', async (ms) => {
    const error = await failure(connectMcpServer({ ...everythingStdio(), connectTimeoutMs: ms }))
    expect([error.code, error.message]).toEqual([
      'invalid_options',
      'MCP server "everything" has an invalid connectTimeoutMs (a positive number of milliseconds, or Infinity)',
    ])
  })

  test.each([0, -1, Number.NaN, '1000'])(
    'a toolTimeoutMs of %s is refused before anything is started',
    async (ms) => {
      // A command that cannot start: a check made after starting it would fail as spawn_failed.
      const error = await failure(
        connectMcpServer({ name: 'x', command: '/nonexistent/kode-mcp-server', toolTimeoutMs: ms as number }),
      )
      expect([error.code, error.message]).toEqual([
        'invalid_options',
        'MCP server "x" has an invalid toolTimeoutMs (a positive number of milliseconds, or Infinity)',
      ])
    },
  )

  test.each([Number.POSITIVE_INFINITY, 2 ** 31])(
    'a connectTimeoutMs of %s, past what a timer holds, is no limit rather than none at all',
    async (ms) => {
      const everything = await harness().connect({ ...everythingStdio(), connectTimeoutMs: ms })
      expect(everything.tools.length).toBeGreaterThan(0)
      await expect(everything.refresh()).resolves.toBe(everything.tools)
    },
  )
})

describe('secrets in the options are never quoted in errors', () => {
  test('a url with a password, or a header value fetch refuses, is invalid_options without the secret', async () => {
    const inUrl = await failure(connectMcpServer({ name: 'docs', url: 'http://me:s3cret@127.0.0.1:1/mcp' }))
    const inHeader = await failure(
      connectMcpServer({
        name: 'docs',
        url: 'http://127.0.0.1:1/mcp',
        headers: { authorization: 'Bearer s3cret\nsecond-line' },
      }),
    )
    for (const error of [inUrl, inHeader]) {
      expect(error.message).not.toContain('s3cret')
      expect(String(error.cause ?? '')).not.toContain('s3cret')
      expect(error.code).toBe('invalid_options')
    }
  })
})

describe('failures during calls are error results, never a hung task', () => {
  test('a server that crashes mid-call: the call and later calls are error results', async () => {
    const h = harness()
    const everything = await h.connect(everythingStdio())
    const closes: unknown[] = []
    everything.onClose((error) => closes.push(error))
    h.model.enqueue(
      response('r1', call('c1', 'everything__trigger-long-running-operation', { duration: 60, steps: 600 })),
      response('r2', call('c2', 'everything__echo', { message: 'anyone?' })),
      response('r3', say('It crashed.')),
    )
    const agent = h.agent({ tools: everything.tools })
    agent.events.once('tool_progress', () => process.kill(everything.pid!, 'SIGKILL'))
    const { outcome } = await collect(agent.run('go'))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'It crashed.' })
    const results = toolResults(await agent.history())
    // The server's last words on stderr are quoted: often the reason it died.
    const said = '; its stderr ends: Starting default (STDIO) server...'
    expect(results.c1).toMatchObject({
      status: 'error',
      outputText: `everything__trigger-long-running-operation failed: MCP server "everything" exited${said}`,
    })
    expect(results.c2).toMatchObject({
      status: 'error',
      outputText: `everything__echo failed: MCP server "everything" exited${said}`,
    })
    expect(everything.connected).toBe(false)
    expect(closes).toHaveLength(1)
    expect(McpConnectionError.is(closes[0]) && closes[0].code).toBe('closed')
  })

  test('a server that closes its stdout mid-call but runs on: the call fails at once, and the server is stopped', async () => {
    const h = harness()
    const odd = await h.connect(
      scripted([{ name: 'mute', inputSchema: { type: 'object' } }], { mute: { closeStdout: true } }),
    )
    const pid = odd.pid!
    const closes: unknown[] = []
    odd.onClose((error) => closes.push(error))
    const result = await odd.tools[0]!.execute({}, {
      signal: new AbortController().signal,
      progress: () => {},
    } as never)
    expect(result).toEqual({
      status: 'error',
      outputText: 'odd__mute failed: MCP server "odd" closed its stdout; its stderr ends: closed stdout',
    })
    expect(odd.connected).toBe(false)
    expect(closes).toHaveLength(1)
    expect(McpConnectionError.is(closes[0]) && closes[0].code).toBe('closed')
    // Nothing more can be read from it: it is stopped, not left running.
    await odd.close()
    expect(isAlive(pid)).toBe(false)
  })

  test('onClose after the connection ended is still told how it ended, once; close() likewise', async () => {
    const h = harness()
    const odd = await h.connect(
      scripted([{ name: 'die', inputSchema: { type: 'object' } }], { die: { exit: 3 } }),
    )
    const gone = new Promise((resolve) => odd.onClose(resolve))
    await Promise.race([
      odd.tools[0]!.execute({}, { signal: new AbortController().signal, progress: () => {} } as never),
      gone,
    ])
    const first = await gone
    expect(odd.connected).toBe(false)
    const late: unknown[] = []
    odd.onClose((error) => late.push(error))
    const unsubscribed: unknown[] = []
    odd.onClose((error) => unsubscribed.push(error))()
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(late).toEqual([first])
    expect(McpConnectionError.is(late[0]) && late[0].code).toBe('closed')
    expect(unsubscribed).toEqual([])
    await odd.close()
    const afterClose: unknown[] = []
    odd.onClose((error) => afterClose.push(error))
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(afterClose).toEqual([first])

    const closed = await h.connect(scripted([]))
    await closed.close()
    const byHost: unknown[] = []
    closed.onClose((error) => byHost.push(error))
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(byHost).toEqual([undefined])
  })

  test('progress that arrives in the same read as the result is reported, all of it, before the result', async () => {
    const h = harness()
    const odd = await h.connect(
      scripted([{ name: 'copy', inputSchema: { type: 'object' } }], {
        copy: {
          progressThen: [
            { progress: 1, total: 2, message: 'first file' },
            { progress: 2, total: 2, message: 'second file' },
          ],
        },
      }),
    )
    h.model.enqueue(response('r1', call('c1', 'odd__copy', {})), response('r2', say('Copied.')))
    const agent = h.agent({ tools: odd.tools })
    const { events } = await collect(agent.run('go'))
    const seen = events.flatMap((e) =>
      e.type === 'tool_progress' ? [`progress ${e.message}`] : e.type === 'tool_result' ? ['result'] : [],
    )
    expect(seen).toEqual(['progress 1/2 first file', 'progress 2/2 second file', 'result'])
  })

  test('a progress message past 1,000 characters is cut: each one is kept in the history', async () => {
    const h = harness()
    const odd = await h.connect(
      scripted([{ name: 'copy', inputSchema: { type: 'object' } }], {
        copy: { progressThen: [{ progress: 1, total: 2, message: 'x'.repeat(50_000) }] },
      }),
    )
    h.model.enqueue(response('r1', call('c1', 'odd__copy', {})), response('r2', say('Copied.')))
    const agent = h.agent({ tools: odd.tools })
    const { events } = await collect(agent.run('go'))
    const messages = events.flatMap((e) => (e.type === 'tool_progress' ? [e.message] : []))
    expect(messages).toEqual([`1/2 ${'x'.repeat(995)}…`])
  })

  test('an answer that is not JSON-RPC fails its call at once, not at the time limit; the connection lives on', async () => {
    const h = harness()
    const odd = await h.connect(
      scripted(
        [
          { name: 'sloppy', inputSchema: { type: 'object' } },
          { name: 'echo', inputSchema: { type: 'object' } },
        ],
        {
          sloppy: { bare: { content: [{ type: 'text', text: 'hi' }] } },
        },
      ),
    )
    h.model.enqueue(
      response('r1', call('c1', 'odd__sloppy', {})),
      response('r2', call('c2', 'odd__echo', { n: 1 })),
      response('r3', say('Done.')),
    )
    const agent = h.agent({ tools: odd.tools, toolTimeoutMs: 20_000 })
    const { outcome } = await collect(agent.run('go'))
    expect(outcome.reason).toBe('completed')
    const results = toolResults(await agent.history())
    expect(results.c1).toMatchObject({
      status: 'error',
      outputText:
        'odd__sloppy failed: MCP server "odd" answered with a message that is not valid JSON-RPC 2.0',
    })
    expect(results.c2).toMatchObject({ outputText: 'echo {"n":1}' })
    expect(odd.connected).toBe(true)
  })

  test('a call the server answers with a generic error (-32000) reads as that error, and the connection lives on', async () => {
    const h = harness()
    const odd = await h.connect(
      scripted([{ name: 'query', inputSchema: { type: 'object' } }], {
        query: { error: { code: -32000, message: 'the database is down' } },
      }),
    )
    h.model.enqueue(response('r1', call('c1', 'odd__query', {})), response('r2', say('Down.')))
    const agent = h.agent({ tools: odd.tools })
    await collect(agent.run('go'))
    expect(toolResults(await agent.history()).c1).toMatchObject({
      status: 'error',
      outputText:
        'odd__query failed: MCP server "odd" answered with an error: MCP error -32000: the database is down',
    })
    expect(odd.connected).toBe(true)
  })

  test('a call that outlives its time limit is an error result and is cancelled on the server', async () => {
    const h = harness()
    const sent: { method?: string; id?: number; params?: unknown }[] = []
    const everything = await h.connect({
      ...everythingStdio(),
      toolTimeoutMs: 300,
      onMessage: (direction, message) => direction === 'send' && sent.push(message as never),
    })
    h.model.enqueue(
      response('r1', call('c1', 'everything__trigger-long-running-operation', { duration: 60, steps: 2 })),
      response('r2', say('Too slow.')),
    )
    const agent = h.agent({ tools: everything.tools })
    const { outcome } = await collect(agent.run('go'))
    expect(outcome.reason).toBe('completed')
    expect(toolResults(await agent.history()).c1).toMatchObject({
      status: 'error',
      outputText: 'Tool "everything__trigger-long-running-operation" timed out after 300 ms.',
    })
    const request = sent.find((m) => m.method === 'tools/call')!
    expect(sent).toContainEqual(
      expect.objectContaining({
        method: 'notifications/cancelled',
        params: expect.objectContaining({ requestId: request.id }),
      }),
    )
  })

  test('close() during a call ends the call and reaps even a server that ignores SIGTERM', async () => {
    const h = harness()
    const everything = await h.connect({
      name: 'stubborn',
      command: process.execPath,
      args: ['--require', STUBBORN, EVERYTHING],
    })
    const pid = everything.pid!
    h.model.enqueue(
      response('r1', call('c1', 'stubborn__trigger-long-running-operation', { duration: 60, steps: 600 })),
      response('r2', say('Closed.')),
    )
    const agent = h.agent({ tools: everything.tools })
    const closing: Promise<void>[] = []
    agent.events.once('tool_progress', () => closing.push(everything.close()))
    const { outcome } = await collect(agent.run('go'))
    await closing[0]
    expect(isAlive(pid)).toBe(false)
    expect(outcome.reason).toBe('completed')
    expect(toolResults(await agent.history()).c1).toMatchObject({
      status: 'error',
      outputText:
        'stubborn__trigger-long-running-operation failed: the connection to MCP server "stubborn" was closed',
    })
  })
})

describe('a server that exits while a process it started lives on', () => {
  test('the call in flight is an error result, and the connection is over', async () => {
    const h = harness()
    let said = ''
    const schema = { type: 'object', properties: {} }
    const odd = await h.connect({
      name: 'odd',
      command: process.execPath,
      args: [
        SCRIPTED,
        JSON.stringify([{ name: 'crash', inputSchema: schema }]),
        '{"crash":{"exit":1}}',
        'helper',
      ],
      onStderr: (text) => {
        said += text
      },
    })
    try {
      h.model.enqueue(response('r1', call('c1', 'odd__crash', {})), response('r2', say('It died.')))
      const agent = h.agent({ tools: odd.tools })
      const { outcome } = await collect(agent.run('go'))
      expect(outcome).toMatchObject({ reason: 'completed', text: 'It died.' })
      expect(toolResults(await agent.history()).c1).toMatchObject({
        status: 'error',
        outputText: expect.stringMatching(/^odd__crash failed: MCP server "odd" exited/),
      })
      expect(odd.connected).toBe(false)
    } finally {
      const helper = Number(/helper=(\d+)/.exec(said)?.[1])
      if (helper) process.kill(helper, 'SIGKILL')
    }
  }, 15_000)
})

describe('odd tool lists still give an agent usable tools', () => {
  test('a tool whose schema nests without end costs only itself; the agent runs with the others', async () => {
    const h = harness()
    const odd = await h.connect({
      ...scripted([{ name: 'plain', inputSchema: { type: 'object' } }]),
      args: [SCRIPTED, JSON.stringify([{ name: 'plain', inputSchema: { type: 'object' } }]), '{}', 'deep'],
    })
    expect(odd.tools.map((tool) => tool.name)).toEqual(['odd__plain'])
    h.model.enqueue(response('r1', call('c1', 'odd__plain', { x: 1 })), response('r2', say('Done.')))
    const { outcome } = await collect(h.agent({ tools: odd.tools }).run('go'))
    expect(outcome.reason).toBe('completed')
  })
  test('structured content that nests without end is not kept; the result and the task go on', async () => {
    const h = harness()
    const odd = await h.connect(
      scripted([{ name: 'deep', inputSchema: { type: 'object' } }], { deep: { nested: 10_000 } }),
    )
    h.model.enqueue(response('r1', call('c1', 'odd__deep', {})), response('r2', say('Done.')))
    const agent = h.agent({ tools: odd.tools })
    const { outcome } = await collect(agent.run('go'))
    expect(outcome.reason).toBe('completed')
    const result = toolResults(await agent.history()).c1
    expect(result).toMatchObject({ outputText: 'nested' })
    expect(result?.uiExtra).toBeUndefined()
  })
  test('a server listing a name three times gets three distinct names an agent accepts', async () => {
    const h = harness()
    const schema = { type: 'object', properties: {} }
    const odd = await h.connect(scripted([1, 2, 3].map(() => ({ name: 'dup', inputSchema: schema }))))
    const names = odd.tools.map((tool) => tool.name)
    expect(new Set(names).size).toBe(3)
    expect(() => h.agent({ tools: odd.tools })).not.toThrow()
  })
  test('a schema that names the 2020-12 dialect is checked by its rules; others as draft-07, as the SDK does', async () => {
    const h = harness()
    // A pair: a string, then a number, and nothing more (`items` applies past `prefixItems`).
    const pair = { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false }
    const odd = await h.connect(
      scripted(
        [
          {
            name: 'modern',
            inputSchema: {
              $schema: 'https://json-schema.org/draft/2020-12/schema',
              type: 'object',
              properties: { point: pair },
              required: ['point'],
            },
            outputSchema: {
              $schema: 'https://json-schema.org/draft/2020-12/schema',
              type: 'object',
              properties: { point: pair },
            },
          },
          {
            // Draft-07's tuple form: `items` as a list.
            name: 'classic',
            inputSchema: {
              type: 'object',
              properties: { point: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } },
            },
          },
        ],
        {
          modern: { content: [{ type: 'text', text: 'ok' }], structuredContent: { point: ['a', 1] } },
        },
      ),
    )
    const [modern, classic] = odd.tools
    expect(modern!.parseArguments('{"point":["a",1]}')).toEqual({ ok: true, args: { point: ['a', 1] } })
    expect(modern!.parseArguments('{"point":["a",1,2]}')).toMatchObject({ ok: false })
    expect(modern!.parseArguments('{"point":[1,"a"]}')).toMatchObject({ ok: false })
    const result = await modern!.execute({ point: ['a', 1] }, {
      signal: new AbortController().signal,
      progress: () => {},
    } as never)
    expect(result).toMatchObject({ outputText: 'ok' })
    expect(result).not.toHaveProperty('status')
    expect(classic!.parseArguments('{"point":["a",1]}')).toEqual({ ok: true, args: { point: ['a', 1] } })
    expect(classic!.parseArguments('{"point":[1,"a"]}')).toMatchObject({ ok: false })
  })
  test('two tools whose schemas share an $id each check arguments against their own schema', async () => {
    const h = harness()
    const odd = await h.connect(
      scripted([
        {
          name: 'first',
          inputSchema: {
            $id: 'args',
            type: 'object',
            properties: { x: { type: 'string' } },
            required: ['x'],
          },
        },
        {
          name: 'second',
          inputSchema: {
            $id: 'args',
            type: 'object',
            properties: { y: { type: 'number' } },
            required: ['y'],
          },
        },
      ]),
    )
    const [first, second] = odd.tools
    expect(first!.parseArguments('{"x":"a"}')).toEqual({ ok: true, args: { x: 'a' } })
    expect(second!.parseArguments('{"y":1}')).toEqual({ ok: true, args: { y: 1 } })
  })
  test('two tools whose output schemas share an $id each have results checked against their own', async () => {
    const h = harness()
    const schema = { type: 'object', properties: {} }
    const odd = await h.connect(
      scripted(
        [
          {
            name: 'first',
            inputSchema: schema,
            outputSchema: {
              $id: 'out',
              type: 'object',
              properties: { x: { type: 'string' } },
              required: ['x'],
            },
          },
          {
            name: 'second',
            inputSchema: schema,
            outputSchema: {
              $id: 'out',
              type: 'object',
              properties: { y: { type: 'number' } },
              required: ['y'],
            },
          },
        ],
        { second: { content: [{ type: 'text', text: 'y is 1' }], structuredContent: { y: 1 } } },
      ),
    )
    h.model.enqueue(response('r1', call('c1', 'odd__second', {})), response('r2', say('Done.')))
    const agent = h.agent({ tools: odd.tools })
    await collect(agent.run('go'))
    expect(toolResults(await agent.history()).c1).toMatchObject({ outputText: 'y is 1' })
    expect(toolResults(await agent.history()).c1?.status).not.toBe('error')
  })
  test('an error result is not checked against the output schema: the model reads the server’s error', async () => {
    const h = harness()
    const odd = await h.connect(
      scripted(
        [
          {
            name: 'quote',
            inputSchema: { type: 'object', properties: {} },
            outputSchema: { type: 'object', properties: { price: { type: 'number' } }, required: ['price'] },
          },
        ],
        {
          quote: {
            content: [{ type: 'text', text: 'quota exceeded, try again tomorrow' }],
            structuredContent: { error: 'quota_exceeded' },
            isError: true,
          },
        },
      ),
    )
    h.model.enqueue(response('r1', call('c1', 'odd__quote', {})), response('r2', say('Done.')))
    const agent = h.agent({ tools: odd.tools })
    await collect(agent.run('go'))
    expect(toolResults(await agent.history()).c1).toMatchObject({
      status: 'error',
      outputText: 'quota exceeded, try again tomorrow',
    })
  })
  test('a format Ajv does not know (Pydantic’s "path") is ignored without a word on the host’s console', async () => {
    const h = harness()
    const pathSchema = { type: 'object', properties: { p: { type: 'string', format: 'path' } } }
    const odd = await h.connect(
      scripted([{ name: 'stat', inputSchema: pathSchema, outputSchema: pathSchema }], {
        stat: { content: [{ type: 'text', text: 'a file' }], structuredContent: { p: '/tmp/a' } },
      }),
    )
    const warn = vi.spyOn(console, 'warn')
    try {
      h.model.enqueue(response('r1', call('c1', 'odd__stat', { p: '/tmp/a' })), response('r2', say('Done.')))
      const agent = h.agent({ tools: odd.tools })
      await collect(agent.run('go'))
      expect(toolResults(await agent.history()).c1).toMatchObject({ status: 'success', outputText: 'a file' })
      expect(odd.tools[0]!.parseArguments('{"p":1}')).toMatchObject({ ok: false })
      expect(warn).not.toHaveBeenCalled()
    } finally {
      warn.mockRestore()
    }
  })
  test('an array schema without items is offered with items: {} (OpenAI refuses the whole request otherwise)', async () => {
    const h = harness()
    const odd = await h.connect(
      scripted([
        {
          name: 'tag',
          inputSchema: {
            type: 'object',
            properties: {
              tags: { type: 'array', description: 'the tags' },
              ids: { anyOf: [{ type: ['array', 'null'] }, { type: 'string' }] },
              nested: { type: 'object', properties: { list: { type: 'array', items: { type: 'array' } } } },
              // A property named like a keyword is a property, not a keyword.
              items: { type: 'string' },
            },
            $defs: { pair: { type: 'array', maxItems: 2 } },
            required: ['tags'],
          },
        },
      ]),
    )
    h.model.enqueue(
      response('r1', call('c1', 'odd__tag', { tags: ['a', 1], ids: [2], nested: { list: [[3]] } })),
      response('r2', say('Done.')),
    )
    const agent = h.agent({ tools: odd.tools })
    await collect(agent.run('go'))
    const body = h.model.requests[0]!.body as { tools: { function: { parameters: unknown } }[] }
    expect(body.tools[0]!.function.parameters).toEqual({
      type: 'object',
      properties: {
        tags: { type: 'array', description: 'the tags', items: {} },
        ids: { anyOf: [{ type: ['array', 'null'], items: {} }, { type: 'string' }] },
        nested: {
          type: 'object',
          properties: { list: { type: 'array', items: { type: 'array', items: {} } } },
        },
        items: { type: 'string' },
      },
      $defs: { pair: { type: 'array', maxItems: 2, items: {} } },
      required: ['tags'],
    })
    // It means what it meant: any items.
    expect(toolResults(await agent.history()).c1).toMatchObject({
      status: 'success',
      outputText: 'tag {"tags":["a",1],"ids":[2],"nested":{"list":[[3]]}}',
    })
    expect(odd.tools[0]!.parseArguments('{}')).toMatchObject({ ok: false })
  })
  test('tools listed against the protocol’s schema cost only themselves: the others are offered as usual', async () => {
    const h = harness()
    const fine = { name: 'fine', inputSchema: { type: 'object', properties: { a: { type: 'string' } } } }
    const odd = await h.connect(
      scripted([
        fine,
        { inputSchema: { type: 'object' } }, // no name: nothing to call it by
        { name: 'no_schema' },
        { name: 'empty_schema', inputSchema: {} },
        { name: 'boolean_property', inputSchema: { type: 'object', properties: { a: true } } },
        { name: 'odd_title', title: 42, inputSchema: { type: 'object' } },
        { name: 'untyped', inputSchema: { properties: { a: { type: 'string' } }, required: ['a'] } },
        { name: 'typed_list', inputSchema: { type: ['object'], properties: { a: { type: 'string' } } } },
        { name: 'a_string', inputSchema: { type: 'string' } },
      ]),
    )
    expect(odd.toolInfo.map((tool) => tool.serverToolName)).toEqual([
      'fine',
      'no_schema',
      'empty_schema',
      'boolean_property',
      'odd_title',
      'untyped',
      'typed_list',
      'a_string',
    ])
    const [, noSchema, emptySchema, booleanProperty] = odd.tools
    expect(noSchema!.parseArguments('{"x":1}')).toEqual({ ok: true, args: { x: 1 } })
    expect(emptySchema!.parseArguments('{}')).toEqual({ ok: true, args: {} })
    // A valid JSON Schema the protocol's own schema is stricter about is kept as it is.
    expect(booleanProperty!.parameters).toMatchObject({ type: 'object', properties: { a: true } })
    expect(odd.toolInfo[4]).toEqual({ serverToolName: 'odd_title', name: 'odd__odd_title' })
    // An object schema in all but its type keeps what it says of the arguments; one of another type says nothing.
    const [untyped, typedList, aString] = odd.tools.slice(5)
    expect(untyped!.parameters).toMatchObject({ type: 'object', properties: { a: { type: 'string' } } })
    expect(untyped!.parseArguments('{}')).toMatchObject({ ok: false })
    expect(typedList!.parameters).toMatchObject({ type: 'object', properties: { a: { type: 'string' } } })
    expect(typedList!.parseArguments('{"a":1}')).toMatchObject({ ok: false })
    expect(aString!.parameters).toMatchObject({ type: 'object', properties: {} })
    expect(aString!.parseArguments('{"b":1}')).toEqual({ ok: true, args: { b: 1 } })
    h.model.enqueue(response('r1', call('c1', 'odd__no_schema', { x: 1 })), response('r2', say('Done.')))
    const agent = h.agent({ tools: odd.tools })
    await collect(agent.run('go'))
    expect(toolResults(await agent.history()).c1).toMatchObject({ outputText: 'no_schema {"x":1}' })
  })
  test('an output schema that does not compile leaves that tool’s results unchecked, and the list usable', async () => {
    const h = harness()
    const schema = { type: 'object', properties: {} }
    const odd = await h.connect(
      scripted(
        [
          {
            name: 'first',
            inputSchema: schema,
            outputSchema: { type: 'object', properties: { a: { type: 'nope' } } },
          },
          {
            name: 'second',
            inputSchema: schema,
            outputSchema: { type: 'object', properties: { y: { type: 'number' } }, required: ['y'] },
          },
        ],
        {
          first: { content: [{ type: 'text', text: 'a is 1' }], structuredContent: { a: 1 } },
          second: { content: [{ type: 'text', text: 'y is a string' }], structuredContent: { y: 'one' } },
        },
      ),
    )
    h.model.enqueue(
      response('r1', call('c1', 'odd__first', {}), call('c2', 'odd__second', {})),
      response('r2', say('Done.')),
    )
    const agent = h.agent({ tools: odd.tools })
    await collect(agent.run('go'))
    const results = toolResults(await agent.history())
    expect(results.c1).toMatchObject({ outputText: 'a is 1' })
    expect(results.c1?.status).not.toBe('error')
    // A schema that compiles is still enforced.
    expect(results.c2).toMatchObject({
      status: 'error',
      outputText: expect.stringMatching(/^odd__second failed: .*does not match the tool's output schema/),
    })
  })
  test('a list read page by page is offered whole; a last page ending with nextCursor null ends it', async () => {
    const h = harness()
    const tools = ['one', 'two', 'three'].map((name) => ({ name, inputSchema: { type: 'object' } }))
    const odd = await h.connect({
      ...scripted(tools),
      args: [SCRIPTED, JSON.stringify(tools), '{}', 'paged'],
    })
    expect(odd.tools.map((tool) => tool.name)).toEqual(['odd__one', 'odd__two', 'odd__three'])
  })
  test('a re-read of a list whose pages never end gives up within connectTimeoutMs', async () => {
    const h = harness()
    const odd = await h.connect({
      ...scripted([{ name: 'tool', inputSchema: { type: 'object' } }]),
      args: [SCRIPTED, JSON.stringify([{ name: 'tool', inputSchema: { type: 'object' } }]), '{}', 'endless'],
      // Also the time to start the server and connect, which a loaded machine may take long over.
      connectTimeoutMs: 1_500,
    })
    const outcome = await Promise.race([
      odd.refresh().then(
        () => 'resolved',
        () => 'rejected',
      ),
      new Promise((resolve) => setTimeout(() => resolve('still reading'), 6_000)),
    ])
    expect(outcome).toBe('rejected')
    expect(odd.tools.map((tool) => tool.name)).toEqual(['odd__tool'])
  })
  test('a refresh that joins one under way still stops when its own signal aborts', async () => {
    const h = harness()
    const odd = await h.connect({
      ...scripted([{ name: 'tool', inputSchema: { type: 'object' } }]),
      args: [SCRIPTED, JSON.stringify([{ name: 'tool', inputSchema: { type: 'object' } }]), '{}', 'endless'],
      connectTimeoutMs: 2_000,
    })
    // A read that pages until the time limit, then a caller who gives up after 50 ms.
    const first = odd.refresh()
    first.catch(() => undefined)
    const controller = new AbortController()
    const reason = new Error('the user left')
    setTimeout(() => controller.abort(reason), 50)
    const started = Date.now()
    await expect(odd.refresh({ signal: controller.signal })).rejects.toBe(reason)
    expect(Date.now() - started).toBeLessThan(1_500)
    // The read it joined goes on for the others, to its own end.
    await expect(first).rejects.toThrow(/timed out/i)
    expect(odd.tools.map((tool) => tool.name)).toEqual(['odd__tool'])
  })
  test('a result in the 2024-10-07 form (toolResult) reaches the model', async () => {
    const h = harness()
    const odd = await h.connect(
      scripted([{ name: 'old', inputSchema: { type: 'object' } }], { old: { toolResult: { answer: 42 } } }),
    )
    h.model.enqueue(response('r1', call('c1', 'odd__old', {})), response('r2', say('Done.')))
    const agent = h.agent({ tools: odd.tools })
    await collect(agent.run('go'))
    expect(toolResults(await agent.history()).c1).toMatchObject({ outputText: '{"answer":42}' })
  })
  test('a content block of an unknown type or a malformed image is a note, the rest is kept', async () => {
    const h = harness()
    const odd = await h.connect(
      scripted([{ name: 'mixed', inputSchema: { type: 'object' } }], {
        mixed: {
          content: [
            { type: 'text', text: 'hello' },
            { type: 'hologram', data: 'x' },
            { type: 'image', data: 42 },
          ],
        },
      }),
    )
    h.model.enqueue(response('r1', call('c1', 'odd__mixed', {})), response('r2', say('Done.')))
    const agent = h.agent({ tools: odd.tools })
    await collect(agent.run('go'))
    expect(toolResults(await agent.history()).c1).toMatchObject({
      outputText: 'hello\n[hologram content omitted]\n[an image the server sent malformed]',
    })
  })

  test('a block without a type, or structured content that is not an object, costs only itself', async () => {
    const h = harness()
    const odd = await h.connect(
      scripted(
        [
          { name: 'untyped', inputSchema: { type: 'object' } },
          { name: 'listed', inputSchema: { type: 'object' } },
        ],
        {
          untyped: { content: [{ text: 'no type' }, 'loose', { type: 'text', text: 'kept' }] },
          listed: { content: [{ type: 'text', text: 'two rows' }], structuredContent: [1, 2] },
        },
      ),
    )
    const run = (i: number) =>
      odd.tools[i]!.execute({}, { signal: new AbortController().signal, progress: () => {} } as never)
    expect(await run(0)).toEqual({
      outputText:
        '[a content block the server sent malformed]\n[a content block the server sent malformed]\nkept',
    })
    expect(await run(1)).toEqual({ outputText: 'two rows', uiExtra: { type: 'json', value: [1, 2] } })
  })
})
