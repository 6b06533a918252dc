import { defineTool, INTERRUPTED_FINISHED_TEXT } from '@kode/core'
import type { Event } from '@kode/protocol'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { collect, delay, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { summarize, summarizeHistory, textResponse } from './helpers/summarize.js'

const harness = useHarness()

function writeTool() {
  const written: string[] = []
  const tool = defineTool({
    name: 'write_file',
    description: 'Writes a file',
    parameters: Type.Object({ path: Type.String() }),
    execute: ({ path }) => {
      written.push(path)
      return `wrote ${path}`
    },
  })
  return { tool, written }
}

describe('hooks', () => {
  test('beforeModelCall adding a message of an unknown role fails the task naming it; nothing is sent', async () => {
    const h = harness()
    const agent = h.createAgent({
      hooks: {
        beforeModelCall: (request) => ({
          ...request,
          messages: [...request.messages, { role: 'narrator', id: 'n1', createdAt: 1, parts: [] } as never],
        }),
      },
    })
    const { events, outcome } = await collect(agent.run('Hello'))
    expectOrdered(events)
    expect(outcome.reason).toBe('error')
    expect(outcome.errorMessage).toContain('request message 1 has an unknown role "narrator"')
    expect(h.server.requests).toHaveLength(0)
    expectValidHistory(await agent.history())
  })

  test('beforeModelCall is awaited and may replace the request; it sees the session and the signal', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Hi.'))
    const seen: unknown[] = []
    const agent = h.createAgent({
      system: 'Be brief.',
      hooks: {
        async beforeModelCall(request, ctx) {
          await delay(1)
          seen.push({ sessionId: ctx.sessionId, aborted: ctx.signal.aborted, system: request.system })
          return { ...request, system: `${request.system ?? ''} Today is Monday.`, temperature: 0 }
        },
      },
    })
    const { events, outcome } = await collect(agent.run('Hello'))
    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Hello',
      ...textResponse('Hi.'),
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish completed: Hi.',
    ])
    expect(outcome.reason).toBe('completed')
    const history = await agent.history()
    expectValidHistory(history)
    // The hook changed what was sent, not what is persisted.
    expect(summarizeHistory(history)).toEqual([
      'system: Be brief.',
      'user: Hello',
      'assistant stop: text "Hi."',
      'task_metadata turns=1 subAgents=0',
    ])
    expect(seen).toEqual([{ sessionId: agent.sessionId, aborted: false, system: undefined }])
    expect(h.server.requests[0]!.body).toMatchObject({
      messages: [
        { role: 'system', content: ' Today is Monday.' },
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello' },
      ],
      temperature: 0,
    })
  })

  test('beforeToolCall denies, rewrites (validated again) or allows; afterToolCall replaces the result', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({
        id: 'r1',
        steps: [
          call('c1', 'write_file', { path: '/etc/passwd' }),
          call('c2', 'write_file', { path: 'notes.txt' }),
          call('c3', 'write_file', { path: 'BIG.TXT' }),
          call('c4', 'write_file', { path: 'x' }),
        ],
      }),
    )
    h.server.enqueue(textReply('r2', 'Done.'))
    const { tool, written } = writeTool()
    const agent = h.createAgent({
      tools: [tool],
      toolConcurrency: 1,
      hooks: {
        beforeToolCall(call) {
          const { path } = JSON.parse(call.argumentsJson) as { path: string }
          if (path.startsWith('/')) return { deny: 'absolute paths are not allowed' }
          if (path === 'BIG.TXT') return { arguments: { path: path.toLowerCase() } }
          if (path === 'x') return { arguments: { path: 42 } }
          return { allow: true }
        },
        afterToolCall: async (call, result) =>
          call.id === 'c2' ? { ...result, outputText: `${result.outputText} (checked)` } : undefined,
      },
    })
    const { events, outcome } = await collect(agent.run('Write'))
    expectOrdered(events)
    expect(outcome.reason).toBe('completed')
    expect(written).toEqual(['notes.txt', 'big.txt'])
    // One call at a time: each next call starts as soon as the one before it has its outcome,
    // and results are emitted in call order.
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Write',
      'turn_start',
      'tool_call_start c1 write_file',
      'tool_call_start c2 write_file',
      'tool_call_start c3 write_file',
      'tool_call_start c4 write_file',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call c1 write_file {"path":"/etc/passwd"}',
      'tool_call c2 write_file {"path":"notes.txt"}',
      'tool_result c1 error: The call was refused: absolute paths are not allowed',
      'tool_call c3 write_file {"path":"BIG.TXT"}',
      'tool_result c2 success: wrote notes.txt (checked)',
      'tool_call c4 write_file {"path":"x"}',
      'tool_result c3 success: wrote big.txt',
      'tool_result c4 error (last): Invalid arguments for tool "write_file" (as rewritten by a hook): /path: Expected string',
      'turn_end',
      ...textResponse('Done.'),
      'turn_end',
      'task_metadata turns=2 subAgents=0',
      'task_finish completed: Done.',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Write',
      'assistant tool_use: call c1 write_file {"path":"/etc/passwd"} | call c2 write_file {"path":"notes.txt"} | call c3 write_file {"path":"BIG.TXT"} | call c4 write_file {"path":"x"}',
      'tool c1 error: The call was refused: absolute paths are not allowed',
      'tool c2 success: wrote notes.txt (checked)',
      'tool c3 success: wrote big.txt',
      'tool c4 error: Invalid arguments for tool "write_file" (as rewritten by a hook): /path: Expected string',
      'assistant stop: text "Done."',
      'task_metadata turns=2 subAgents=0',
    ])
  })

  test.each(['beforeModelCall', 'beforeToolCall', 'afterToolCall'] as const)(
    'a throwing %s fails the task as a throwing listener does',
    async (hook) => {
      const h = harness()
      h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'write_file', { path: 'a' })] }))
      const { tool } = writeTool()
      const boom = new Error('boom')
      const agent = h.createAgent({
        tools: [tool],
        hooks: {
          [hook]: () => {
            throw boom
          },
        },
      })
      const run = agent.run('Write')
      const raw: Event[] = []
      const events: string[] = []
      const thrown = await (async () => {
        for await (const event of run) raw.push(event)
      })().catch((error: unknown) => error)
      expectOrdered(raw)
      events.push(...summarize(raw))
      expect(thrown).toBe(boom)
      await expect(run.done).rejects.toBe(boom)
      const message = `The ${hook} hook threw: boom`
      // The tool ran to its end before afterToolCall threw, and never ran when beforeToolCall
      // threw: its result says so.
      const failed =
        hook === 'afterToolCall'
          ? `The task failed after this tool call finished (its result was not kept): ${message}`
          : `The task failed before this tool call ran: ${message}`
      const start = ['task_start', 'user_message: Write', 'turn_start']
      const tail = [
        `error: ${message}`,
        'turn_end',
        'task_metadata turns=1 subAgents=0',
        'task_finish error: ',
      ]
      expect(events).toEqual(
        hook === 'beforeModelCall'
          ? [...start, ...tail]
          : [
              ...start,
              'tool_call_start c1 write_file',
              'response_complete: ',
              'usage 100/20',
              'context_usage 120/128000',
              'tool_call c1 write_file {"path":"a"}',
              `tool_result c1 error (last): ${failed}`,
              ...tail,
            ],
      )
      const history = await agent.history()
      expectValidHistory(history)
      const end = [`error: ${message}`, 'task_metadata turns=1 subAgents=0']
      expect(summarizeHistory(history)).toEqual(
        hook === 'beforeModelCall'
          ? ['user: Write', ...end]
          : [
              'user: Write',
              'assistant tool_use: call c1 write_file {"path":"a"}',
              `tool c1 error: ${failed}`,
              ...end,
            ],
      )
    },
  )
})

describe('a refusal without a reason', () => {
  test.each([
    ['undefined', undefined],
    ['null', null],
    ['an empty string', ''],
    ['blank text', '  '],
  ])('{ deny: %s } refuses the call, and the model reads that it was refused', async (_, reason) => {
    const h = harness()
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'write_file', { path: 'a' })] }))
    h.server.enqueue(textReply('r2', 'Done.'))
    const { tool, written } = writeTool()
    const agent = h.createAgent({
      tools: [tool],
      hooks: { beforeToolCall: () => ({ deny: reason as never }) },
    })
    const { outcome } = await collect(agent.run('Write'))
    expect(outcome.reason).toBe('completed')
    expect(written).toEqual([])
    expect(summarizeHistory(await agent.history())[2]).toBe('tool c1 error: The call was refused.')
  })
})

describe('hooks that return odd values', () => {
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  test.each([
    ['a string', 'deny'],
    ['true', true],
    ['a number', 1],
    ['arguments holding a BigInt', { arguments: { path: 1n } }],
    ['cyclic arguments', { arguments: cyclic }],
    ['arguments that are a function', { arguments: () => 'a' }],
    ['allow: false', { allow: false }],
    // A misspelt key must not read as "nothing returned": a permission hook never fails open.
    ['an object with none of allow, deny or arguments', { allowed: false }],
    ['an empty object', {}],
  ] as const)(
    'beforeToolCall returning %s ends the call with a result and fails the task',
    async (_, decision) => {
      const h = harness()
      h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'write_file', { path: 'a' })] }))
      h.server.enqueue(textReply('r2', 'Done.'))
      const { tool, written } = writeTool()
      const agent = h.createAgent({
        tools: [tool],
        hooks: { beforeToolCall: () => decision as never },
      })
      const run = agent.run('Write')
      const raw: Event[] = []
      const settled = (async () => {
        for await (const event of run) raw.push(event)
      })().then(
        () => 'resolved',
        () => 'rejected',
      )
      const result = await Promise.race([settled, delay(2000).then(() => 'hung')])
      expect(result).toBe('rejected')
      expectOrdered(raw)
      expect(written).toEqual([])
      const history = await agent.history()
      expectValidHistory(history)
      expect(summarizeHistory(history)[2]).toMatch(
        /^tool c1 error: The task failed before this tool call ran: The beforeToolCall hook /,
      )
    },
  )
})

describe('beforeModelCall returning something that is not a request', () => {
  test.each([
    ['a string', 'use gpt-5'],
    ['a number', 42],
    ['an object without messages', { system: 'Be brief' }],
    ['messages that are not a list', { messages: 'Hi' }],
  ] as const)('(%s) fails the task as a throwing hook does, before anything is sent', async (_, hooked) => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Hi.'))
    const agent = h.createAgent({ hooks: { beforeModelCall: () => hooked as never } })
    const run = agent.run('Hello')
    const events = await collect(run).catch(() => undefined)
    expect(events).toBeUndefined()
    const error = await run.done.then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(TypeError)
    expect((error as Error).message).toMatch(
      /^beforeModelCall must return a request \(with a messages list\) or nothing/,
    )
    expect(h.server.requests).toHaveLength(0)
    const history = await agent.history()
    expectValidHistory(history)
  })
})

describe('beforeModelCall returning a request with settings no api takes', () => {
  test.each([
    ['a temperature that is not a number', { temperature: Number.NaN }, /temperature/],
    ['a negative token limit', { maxOutputTokens: -5 }, /maxOutputTokens/],
    ['an unknown tool choice', { toolChoice: 'sometimes' }, /toolChoice/],
    ['a fractional reasoning budget', { reasoning: { budgetTokens: 1.5 } }, /budgetTokens/],
    [
      'provider options that are not objects',
      { providerOptions: { 'openai-chat': 'fast' } },
      /providerOptions/,
    ],
  ] as const)(
    '(%s) fails the task as a throwing hook does, before anything is sent',
    async (_, fields, named) => {
      const h = harness()
      h.server.enqueue(textReply('r1', 'Hi.'))
      // The agent's own settings are checked before anything runs; the hook's must not slip through
      // to the wire (a NaN temperature went out as `null`, the provider's default).
      const agent = h.createAgent({
        hooks: { beforeModelCall: (request) => ({ ...request, ...fields }) as never },
      })
      const run = agent.run('Hello')
      const error = await run.done.then(
        () => undefined,
        (thrown: unknown) => thrown,
      )
      expect(error).toBeInstanceOf(TypeError)
      expect((error as Error).message).toMatch(/^beforeModelCall returned a request whose /)
      expect((error as Error).message).toMatch(named)
      expect(h.server.requests).toHaveLength(0)
      const history = await agent.history()
      expectValidHistory(history)
      expect(summarizeHistory(history).at(-2)).toMatch(
        /^error: The beforeModelCall hook threw: beforeModelCall returned/,
      )
    },
  )

  test('a request whose settings are usable is sent as returned', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Hi.'))
    const agent = h.createAgent({
      hooks: {
        beforeModelCall: (request) =>
          ({ ...request, temperature: 0.2, maxOutputTokens: 100, reasoning: {} }) as never,
      },
    })
    expect((await agent.run('Hello').done).reason).toBe('completed')
    expect(h.server.requests[0]!.body).toMatchObject({ temperature: 0.2, max_completion_tokens: 100 })
  })
})

test('an interrupt while beforeModelCall ignores its signal ends the task at once', async () => {
  const h = harness()
  h.server.enqueue(textReply('r1', 'Hi.'))
  const controller = new AbortController()
  const agent = h.createAgent({
    hooks: {
      beforeModelCall: () => {
        controller.abort()
        return new Promise<undefined>(() => {})
      },
    },
  })
  const ended = collect(agent.run('Hello', { signal: controller.signal }))
  expect(await Promise.race([ended, delay(2000).then(() => 'hung')])).not.toBe('hung')
  const { events, outcome } = await ended
  expectOrdered(events)
  expect(outcome.reason).toBe('aborted')
  expect(summarize(events)).toEqual([
    'task_start',
    'user_message: Hello',
    'turn_start',
    'interrupt',
    'turn_end',
    'task_metadata turns=1 subAgents=0',
    'task_finish aborted: ',
  ])
  expect(h.server.requests).toEqual([])
  expectValidHistory(await agent.history())
})

/** A tool named `fail` that throws `disk full`. */
const diskFull = defineTool({
  name: 'fail',
  description: 'Fails',
  parameters: Type.Object({}),
  execute: () => {
    throw new Error('disk full')
  },
})

test('afterToolCall returning null keeps the result, as returning nothing does', async () => {
  const h = harness()
  h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'fail', {})] }))
  h.server.enqueue(textReply('r2', 'Done.'))
  const agent = h.createAgent({ tools: [diskFull], hooks: { afterToolCall: () => null as never } })
  const { events, outcome } = await collect(agent.run('Go'))
  expectOrdered(events)
  expect(outcome.reason).toBe('completed')
  const history = await agent.history()
  expectValidHistory(history)
  expect(summarizeHistory(history)[2]).toBe('tool c1 error: disk full')
})

test('afterToolCall may return text: it replaces the result as a successful output', async () => {
  const h = harness()
  h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'fail', {})] }))
  h.server.enqueue(textReply('r2', 'Done.'))
  // Typed without a cast: the hook's return type takes text.
  const agent = h.createAgent({ tools: [diskFull], hooks: { afterToolCall: () => 'retried: written' } })
  const { outcome } = await collect(agent.run('Go'))
  expect(outcome.reason).toBe('completed')
  expect(summarizeHistory(await agent.history())[2]).toBe('tool c1 success: retried: written')
})

test('a call interrupted while beforeToolCall runs never runs, even when the hook then allows it', async () => {
  const h = harness()
  h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'write_file', { path: 'a' })] }))
  const controller = new AbortController()
  const { tool, written } = writeTool()
  const agent = h.createAgent({
    tools: [tool],
    hooks: {
      beforeToolCall: async () => {
        controller.abort()
        await delay(5)
        return { allow: true }
      },
    },
  })
  const { events, outcome } = await collect(agent.run('Write', { signal: controller.signal }))
  await delay(20)
  expectOrdered(events)
  expect(outcome.reason).toBe('aborted')
  expect(written).toEqual([])
  const history = await agent.history()
  expectValidHistory(history)
  expect(summarizeHistory(history)[2]).toBe(
    'tool c1 aborted: The user interrupted this tool call before it finished.',
  )
})

test('a hook that changes the call it is shown changes neither the call nor the id its result answers', async () => {
  const h = harness()
  h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'write_file', { path: 'a' })] }))
  h.server.enqueue(textReply('r2', 'Done.'))
  const { tool, written } = writeTool()
  const change = (shown: { id: string; argumentsJson: string }) => {
    shown.id = 'changed'
    shown.argumentsJson = '{"path":"b"}'
  }
  const agent = h.createAgent({
    tools: [tool],
    hooks: {
      beforeToolCall: (shown) => {
        change(shown)
        return undefined
      },
      afterToolCall: (shown) => {
        change(shown)
        return undefined
      },
    },
  })
  const { events, outcome } = await collect(agent.run('Write'))
  expectOrdered(events)
  expect(outcome.reason).toBe('completed')
  expect(written).toEqual(['a'])
  const history = await agent.history()
  expectValidHistory(history)
  expect(summarizeHistory(history).slice(1, 3)).toEqual([
    'assistant tool_use: call c1 write_file {"path":"a"}',
    'tool c1 success: wrote a',
  ])
})

test('afterToolCall does not see a call that ends after the task was interrupted', async () => {
  const h = harness()
  h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'slow', {})] }))
  const controller = new AbortController()
  const slow = defineTool({
    name: 'slow',
    description: 'Finishes anyway when interrupted',
    parameters: Type.Object({}),
    execute: (_args, ctx) =>
      new Promise<string>((resolve) => {
        ctx.signal.addEventListener('abort', () => resolve('finished anyway'))
        setTimeout(() => controller.abort(), 5)
      }),
  })
  const seen: string[] = []
  const agent = h.createAgent({
    tools: [slow],
    hooks: {
      afterToolCall: (shown, result) => {
        seen.push(`${shown.id}: ${result.outputText}`)
        throw new Error('the call was answered already')
      },
    },
  })
  const { events, outcome } = await collect(agent.run('Go', { signal: controller.signal }))
  await delay(20)
  expectOrdered(events)
  expect(outcome.reason).toBe('aborted')
  expect(seen).toEqual([])
  const history = await agent.history()
  expectValidHistory(history)
  expect(summarizeHistory(history)[2]).toBe(
    'tool c1 aborted: The user interrupted this tool call before it finished.',
  )
})

describe('afterToolCall returning something that is not a result', () => {
  test.each([
    ['a number', 42],
    ['true', true],
    ['an array', ['done']],
    ['an object without outputText', { output: 'done' }],
    ['outputText that is not a string', { outputText: 7 }],
    ['parts the history cannot hold', { outputText: 'done', parts: [{ type: 'video', url: 'x' }] }],
    ['a uiExtra JSON cannot hold', { outputText: 'done', uiExtra: { size: 10n } }],
  ] as const)('(%s) fails the task as a throwing hook does, never blaming the tool', async (_, replaced) => {
    const h = harness()
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'write_file', { path: 'a' })] }))
    h.server.enqueue(textReply('r2', 'Done.'))
    const { tool, written } = writeTool()
    const agent = h.createAgent({ tools: [tool], hooks: { afterToolCall: () => replaced as never } })
    const run = agent.run('Write')
    const raw: Event[] = []
    const thrown = await (async () => {
      for await (const event of run) raw.push(event)
    })().catch((error: unknown) => error)
    expectOrdered(raw)
    expect(written).toEqual(['a'])
    expect(thrown).toBeInstanceOf(TypeError)
    expect((thrown as Error).message).toMatch(
      /^afterToolCall must return a result \(text or an object with a string outputText\) or nothing/,
    )
    await expect(run.done).rejects.toBe(thrown)
    expect(h.server.requests).toHaveLength(1)
    const history = await agent.history()
    expectValidHistory(history)
    const lines = summarizeHistory(history)
    expect(lines[2]).toMatch(
      /^tool c1 error: The task failed after this tool call finished \(its result was not kept\): The afterToolCall hook threw: afterToolCall must/,
    )
    expect(lines.at(-2)).toMatch(/^error: The afterToolCall hook threw: afterToolCall must return/)
  })
})

describe('a hook that stops when its signal aborts', () => {
  /** What a hook that honours its signal does (as `fetch` does): rejects with the abort's reason. */
  const untilAborted = (signal: AbortSignal) =>
    new Promise<never>((_, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason), { once: true })
    })

  test.each(['beforeModelCall', 'beforeToolCall', 'afterToolCall'] as const)(
    '(%s) lets the interrupted task end as aborted: the run resolves, it does not reject',
    async (hook) => {
      const h = harness()
      h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'write_file', { path: 'a' })] }))
      const { tool } = writeTool()
      const controller = new AbortController()
      const stopping = (ctx: { signal: AbortSignal }) => {
        setTimeout(() => controller.abort(), 1)
        return untilAborted(ctx.signal)
      }
      const hooks = {
        beforeModelCall: (_request: unknown, ctx: { signal: AbortSignal }) => stopping(ctx),
        beforeToolCall: (_call: unknown, ctx: { signal: AbortSignal }) => stopping(ctx),
        afterToolCall: (_call: unknown, _result: unknown, ctx: { signal: AbortSignal }) => stopping(ctx),
      }
      const agent = h.createAgent({ tools: [tool], hooks: { [hook]: hooks[hook] } as never })
      const { events, outcome } = await collect(agent.run('Write', { signal: controller.signal }))
      expectOrdered(events)
      expect(outcome.reason).toBe('aborted')
      expect(summarize(events).filter((line) => line.startsWith('error'))).toEqual([])
      const history = await agent.history()
      expectValidHistory(history)
      expect(summarizeHistory(history).filter((line) => line.startsWith('error'))).toEqual([])
    },
  )
})

test('a call interrupted while afterToolCall runs says its tool finished, so the model does not take it for undone', async () => {
  const h = harness()
  h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'write_file', { path: 'a' })] }))
  const controller = new AbortController()
  const { tool, written } = writeTool()
  const agent = h.createAgent({
    tools: [tool],
    hooks: {
      // Never settles, and ignores its signal.
      afterToolCall: () => {
        controller.abort()
        return new Promise<undefined>(() => {})
      },
    },
  })
  const { events, outcome } = await collect(agent.run('Write', { signal: controller.signal }))
  expectOrdered(events)
  expect(outcome.reason).toBe('aborted')
  expect(written).toEqual(['a'])
  const history = await agent.history()
  expectValidHistory(history)
  // Its result is not kept (the hook never gave it back), but the write happened.
  expect(summarizeHistory(history)[2]).toBe(`tool c1 aborted: ${INTERRUPTED_FINISHED_TEXT}`)
  expect(INTERRUPTED_FINISHED_TEXT).toBe(
    'The user interrupted the task after this tool call finished; its result was not kept.',
  )
})

test('beforeModelCall returning new message objects changes each request, messages sent before included', async () => {
  const h = harness()
  h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'lookup', {})] }))
  h.server.enqueue(textReply('r2', 'Done.'))
  const lookup = defineTool({
    name: 'lookup',
    description: 'Looks up the key',
    parameters: Type.Object({}),
    execute: () => 'key sk-live-42',
  })
  // What to hide grows as the session goes: the second request hides what the first did not.
  const secrets = ['hunter2']
  const redact = (text: string) => secrets.reduce((out, secret) => out.replaceAll(secret, '***'), text)
  const agent = h.createAgent({
    tools: [lookup],
    hooks: {
      beforeModelCall: (request) => {
        const redacted = {
          ...request,
          messages: request.messages.map((message) => {
            if (message.role === 'tool') return { ...message, outputText: redact(message.outputText) }
            if (message.role !== 'user') return message
            const parts = message.parts.map((part) =>
              part.type === 'text' ? { ...part, text: redact(part.text) } : part,
            )
            return { ...message, parts }
          }),
        }
        secrets.push('sk-live-42')
        return redacted
      },
    },
  })
  expect((await agent.run('My password is hunter2, my key sk-live-42').done).reason).toBe('completed')
  const sent = h.server.requests.map((request) => (request.body as { messages: unknown[] }).messages)
  expect(sent).toEqual([
    [{ role: 'user', content: 'My password is ***, my key sk-live-42' }],
    [
      { role: 'user', content: 'My password is ***, my key ***' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'key ***' },
    ],
  ])
  expect(summarizeHistory(await agent.history()).slice(0, 3)).toEqual([
    'user: My password is hunter2, my key sk-live-42',
    'assistant tool_use: call c1 lookup {}',
    'tool c1 success: key sk-live-42',
  ])
})
