import { PassThrough } from 'node:stream'
import { createAgent, defineTool, type Tool } from '@kode/core'
import { createClient, type LLMClient } from '@kode/providers'
import { createSseTestServer, type SseTestServer } from '@kode/providers/testing'
import { createMemorySessionStore } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from '../../src/app.js'
import { createStyle } from '../../src/display/style.js'
import { LineInput } from '../../src/repl/line-input.js'
import { Repl } from '../../src/repl/repl.js'
import { anthropicStream } from '../../src/scripted/anthropic-stream.js'
import { shelfOf } from '../../src/sessions.js'

// Ctrl-C in the REPL while a task runs, driven through the REPL's own LineInput (as the SIGINT
// handler drives it when input is not a terminal).

/** The smallest App a Repl needs: one model client, the given tools, a memory store. */
function appWith(client: LLMClient, tools: Tool[] = []): App {
  const store = createMemorySessionStore()
  return {
    cwd: '/',
    workspace: undefined as never,
    store,
    listSessions: shelfOf(store).listSessions,
    tools,
    builtinTools: tools,
    system: '',
    config: {},
    notices: [],
    thinking: 'collapse',
    sessionsDir: '',
    yes: false,
    exportsDir: '',
    resumeCommand: (id) => `kode --resume ${id}`,
    model: { client, modelSettings: {}, label: 'test', close: async () => {} },
    agent: (sessionId) => createAgent({ client, store, tools, ...(sessionId ? { sessionId } : {}) }),
    switchModel: () => Promise.reject(new Error('not in this test')),
    titleSession: async () => {},
    close: async () => {},
  }
}

/** A REPL on piped input: `type` sends a line, `input.interrupt()` is Ctrl-C. */
function startRepl(app: App) {
  const stdin = new PassThrough()
  const chunks: string[] = []
  const output = { write: (text: string) => void chunks.push(text), columns: 100 }
  const input = new LineInput(stdin, new PassThrough() as unknown as NodeJS.WriteStream, '› ')
  const repl = new Repl(app, { input, output, style: createStyle(false), live: false })
  const status = repl.run({ resumed: false })
  return {
    input,
    status,
    type: (line: string) => stdin.write(`${line}\n`),
    screen: () => chunks.join(''),
  }
}

function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

/** A model client that ignores its abort signal: a task cannot end after an interrupt. */
function stubbornClient() {
  const streaming = deferred()
  const client: LLMClient = {
    api: 'stubborn',
    provider: 'stubborn',
    model: 'stubborn-1',
    modelInfo: undefined,
    stream: () =>
      (async function* () {
        streaming.resolve()
        await new Promise(() => {})
      })(),
    complete: () => new Promise(() => {}),
  }
  return { client, streaming }
}

describe('Ctrl-C while a task runs', () => {
  test('a second Ctrl-C leaves with status 130 when the interrupted task does not stop', async () => {
    const { client: stubborn, streaming } = stubbornClient()
    const repl = startRepl(appWith(stubborn))
    repl.type('go')
    await streaming.promise
    repl.input.interrupt()
    repl.input.interrupt()
    expect(await repl.status).toBe(130)
    repl.input.close()
  })

  test('a second Ctrl-C leaves with status 130 when a task carried on by /resume does not stop', async () => {
    const { client, streaming } = stubbornClient()
    const write = defineTool({
      name: 'write',
      description: 'Writes',
      parameters: Type.Object({}),
      needsApproval: true,
      execute: () => 'written',
    })
    const app = appWith(client, [write])
    // A stored session whose task stopped waiting for approval: /resume decides the call (denied:
    // no terminal to ask) and carries the task on, whose next model call never ends.
    await app.store.create({ id: 'waiting' })
    await app.store.append('waiting', [
      { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'Write' }] },
      {
        role: 'assistant',
        id: 'a1',
        createdAt: 2,
        parts: [{ type: 'tool_call', id: 'c1', name: 'write', argumentsJson: '{}' }],
        stopReason: 'tool_use',
      },
      {
        type: 'approval_request',
        id: 'q1',
        createdAt: 3,
        toolCallId: 'c1',
        toolName: 'write',
        arguments: '{}',
      },
      { type: 'task_metadata', id: 'm1', createdAt: 4, metadata: { main: { turnCount: 1 }, subAgents: [] } },
    ])
    const repl = startRepl(app)
    repl.type('/resume waiting')
    await streaming.promise
    expect(repl.screen()).toContain('write: denied')
    repl.input.interrupt()
    repl.input.interrupt()
    expect(await repl.status).toBe(130)
    repl.input.close()
  })

  describe('a tool that ignores its signal', () => {
    let server: SseTestServer
    beforeAll(async () => {
      server = await createSseTestServer()
    })
    afterAll(() => server.close())

    test('does not hold the task: one Ctrl-C ends it, and the REPL goes on', async () => {
      const running = deferred()
      const stubbornTool = defineTool({
        name: 'stubborn',
        description: 'Never finishes and ignores its signal',
        parameters: Type.Object({}),
        execute: () => {
          running.resolve()
          return new Promise<string>(() => {})
        },
      })
      const call = { toolUse: { id: 'toolu_1', name: 'stubborn', input: {} } }
      server.enqueue({ body: anthropicStream([call], { id: 'msg_1', model: 'm', inputTokens: 10 }).frames })
      const client = createClient({ api: 'anthropic', model: 'm', baseUrl: server.url })
      const repl = startRepl(appWith(client, [stubbornTool]))
      repl.type('go')
      await running.promise
      repl.input.interrupt()
      repl.type('/exit')
      // The task ended as interrupted (the engine settles the call as aborted), and the REPL read on.
      expect(await repl.status).toBe(0)
      expect(repl.screen()).toContain('⏹ Interrupted by user')
      repl.input.close()
    })
  })
})
