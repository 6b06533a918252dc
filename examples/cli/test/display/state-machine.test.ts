import { describe, expect, test } from 'vitest'
import { DisplayStateMachine } from '../../src/display/state-machine.js'
import { ev } from '../helpers/events.js'

const main = () => new DisplayStateMachine('main', { kind: 'main' })
const sub = () => new DisplayStateMachine('child', { kind: 'sub_agent', name: 'explore', color: 1 })

describe('main session', () => {
  test('starts IDLE', () => {
    expect(main().state).toBe('IDLE')
  })

  test('thinking_start enters THINKING and opens the thinking area', () => {
    const m = main()
    expect(m.handle(ev('thinking_start', {}))).toEqual([{ type: 'thinking_start', sessionId: 'main' }])
    expect(m.state).toBe('THINKING')
  })

  test('thinking_delta passes the text on', () => {
    const m = main()
    m.handle(ev('thinking_start', {}))
    expect(m.handle(ev('thinking_delta', { content: 'hmm' }))).toEqual([
      { type: 'thinking_delta', sessionId: 'main', text: 'hmm' },
    ])
  })

  test('thinking_end collapses to a header with the first line and the time it took', () => {
    const m = main()
    m.handle(ev('thinking_start', { timestamp: 1000 }))
    m.handle(ev('thinking_delta', { content: '**Planning the tour**\nFirst the README.' }))
    expect(m.handle(ev('thinking_end', { timestamp: 3500 }))).toEqual([
      {
        type: 'thinking_end',
        sessionId: 'main',
        header: 'Planning the tour',
        text: '**Planning the tour**\nFirst the README.',
        durationMs: 2500,
      },
    ])
    expect(m.state).toBe('IDLE')
  })

  test('assistant_text_start enters STREAMING_TEXT', () => {
    const m = main()
    expect(m.handle(ev('assistant_text_start', {}))).toEqual([])
    expect(m.state).toBe('STREAMING_TEXT')
  })

  test('assistant_text_delta emits each completed line and the open line', () => {
    const m = main()
    m.handle(ev('assistant_text_start', {}))
    expect(m.handle(ev('assistant_text_delta', { content: '# Title\nsome ' }))).toEqual([
      { type: 'text_line', sessionId: 'main', line: { kind: 'prose', text: '# Title' } },
      { type: 'text_partial', sessionId: 'main', text: 'some ' },
    ])
  })

  test('lines inside a fenced block are code lines', () => {
    const m = main()
    m.handle(ev('assistant_text_start', {}))
    const lines = m
      .handle(ev('assistant_text_delta', { content: '```ts\nconst a = 1\n```\n' }))
      .flatMap((c) => (c.type === 'text_line' ? [c.line] : []))
    expect(lines).toEqual([
      { kind: 'fence', text: '```ts', lang: 'ts' },
      { kind: 'code', text: 'const a = 1' },
      { kind: 'fence', text: '```' },
    ])
  })

  test('assistant_text_end flushes the open line and clears the partial', () => {
    const m = main()
    m.handle(ev('assistant_text_start', {}))
    m.handle(ev('assistant_text_delta', { content: 'last words' }))
    expect(m.handle(ev('assistant_text_end', {}))).toEqual([
      { type: 'text_line', sessionId: 'main', line: { kind: 'prose', text: 'last words' } },
      { type: 'text_partial', sessionId: 'main', text: '' },
    ])
    expect(m.state).toBe('IDLE')
  })

  test('live response_complete renders nothing: the deltas showed it', () => {
    expect(main().handle(ev('response_complete', { content: 'hi' }))).toEqual([])
  })

  test('replayed response_complete shows collapsed thinking and the text', () => {
    const commands = main().handle(
      ev('response_complete', { content: 'a\nb', thinkingText: 'why' }),
      'replay',
    )
    expect(commands.map((c) => c.type)).toEqual(['thinking_end', 'text_line', 'text_line'])
  })

  test('response_complete lists the sources cited, each once, live and replayed', () => {
    const citations = [
      { url: 'https://a.example/', title: 'A page', citedText: 'one passage' },
      { url: 'https://a.example/', title: 'A page', citedText: 'another passage' },
      { url: 'https://b.example/x' },
      { title: 'Contract.pdf' },
      {},
    ]
    const sources = [
      { label: 'A page', url: 'https://a.example/' },
      { label: 'https://b.example/x', url: 'https://b.example/x' },
      { label: 'Contract.pdf' },
      { label: 'source' },
    ]
    expect(main().handle(ev('response_complete', { content: 'hi', citations }))).toEqual([
      { type: 'sources', sessionId: 'main', sources },
    ])
    const replayed = main().handle(ev('response_complete', { content: 'hi', citations }), 'replay')
    expect(replayed.map((c) => c.type)).toEqual(['text_line', 'sources'])
  })

  test('tool_call_start shows a pending tool', () => {
    expect(main().handle(ev('tool_call_start', { toolCallId: 'c1', toolName: 'read_file' }))).toEqual([
      { type: 'tool_pending', sessionId: 'main', toolCallId: 'c1', toolName: 'read_file' },
    ])
  })

  test('tool_call enters TOOL_EXECUTING with a summary of the arguments', () => {
    const m = main()
    const commands = m.handle(
      ev('tool_call', { toolCallId: 'c1', toolName: 'read_file', arguments: '{"path":"README.md"}' }),
    )
    expect(commands).toEqual([
      {
        type: 'tool_start',
        sessionId: 'main',
        toolCallId: 'c1',
        toolName: 'read_file',
        summary: 'README.md',
      },
    ])
    expect(m.state).toBe('TOOL_EXECUTING')
  })

  test('tool_progress passes the message on', () => {
    expect(main().handle(ev('tool_progress', { toolCallId: 'c1', toolName: 't', message: '50%' }))).toEqual([
      { type: 'tool_progress', sessionId: 'main', toolCallId: 'c1', message: '50%' },
    ])
  })

  test('tool_result reports status, a preview and the duration; the last one returns to IDLE', () => {
    const m = main()
    m.handle(
      ev('tool_call', {
        toolCallId: 'c1',
        toolName: 'list_dir',
        arguments: '{"path":"packages"}',
        timestamp: 10,
      }),
    )
    m.handle(ev('tool_call', { toolCallId: 'c2', toolName: 'list_dir', arguments: '{}', timestamp: 10 }))
    const done = m.handle(
      ev('tool_result', {
        toolCallId: 'c1',
        toolName: 'list_dir',
        result: 'core/\nprotocol/',
        status: 'success',
        isLastInTurn: false,
        timestamp: 60,
      }),
    )
    expect(done).toEqual([
      {
        type: 'tool_done',
        sessionId: 'main',
        toolCallId: 'c1',
        toolName: 'list_dir',
        summary: 'packages',
        status: 'success',
        preview: 'core/ (+1 lines)',
        durationMs: 50,
      },
    ])
    expect(m.state).toBe('TOOL_EXECUTING')
    m.handle(
      ev('tool_result', {
        toolCallId: 'c2',
        toolName: 'list_dir',
        result: 'x',
        status: 'error',
        isLastInTurn: true,
      }),
    )
    expect(m.state).toBe('IDLE')
  })

  test('todo_change shows the list', () => {
    const todos = [{ content: 'Read', status: 'pending' as const }]
    expect(main().handle(ev('todo_change', { todos }))).toEqual([
      { type: 'todo_list', sessionId: 'main', todos },
    ])
  })

  test('the estimate before a model call draws nothing and does not take the place of the measured figure', () => {
    const m = main()
    const estimate = { contextPercent: 5, contextTokens: 10_000, contextWindow: 200000, estimated: true }
    expect(m.handle(ev('context_usage', estimate))).toEqual([])
    expect(m.handle(ev('usage', { usage: { inputTokens: 10, outputTokens: 5 } }))).toEqual([])
    expect(m.handle(ev('context_usage', { contextPercent: 7.5, contextWindow: 200000 }))).toEqual([
      {
        type: 'usage',
        sessionId: 'main',
        usage: { inputTokens: 10, outputTokens: 5 },
        context: { percent: 7.5, window: 200000 },
      },
    ])
  })

  test('usage waits for context_usage and becomes one line with it', () => {
    const m = main()
    expect(m.handle(ev('usage', { usage: { inputTokens: 10, outputTokens: 5 }, costUsd: 0.01 }))).toEqual([])
    expect(m.handle(ev('context_usage', { contextPercent: 7.5, contextWindow: 200000 }))).toEqual([
      {
        type: 'usage',
        sessionId: 'main',
        usage: { inputTokens: 10, outputTokens: 5 },
        costUsd: 0.01,
        context: { percent: 7.5, window: 200000 },
      },
    ])
  })

  test('usage without a context figure is shown before the next event', () => {
    const m = main()
    m.handle(ev('usage', { usage: { outputTokens: 5 } }))
    expect(m.handle(ev('turn_end', {})).map((c) => c.type)).toEqual(['usage'])
  })

  test('task_finish ends the task with its reason and the metadata before it', () => {
    const m = main()
    const metadata = { main: { turnCount: 2 }, subAgents: [] }
    expect(m.handle(ev('task_metadata', { metadata }))).toEqual([])
    expect(
      m.handle(ev('task_finish', { taskResult: 'x', hasStructuredOutput: false, reason: 'completed' })),
    ).toEqual([{ type: 'task_end', sessionId: 'main', reason: 'completed', metadata }])
  })

  test('an error that is not retried enters ERROR until the next turn', () => {
    const m = main()
    expect(m.handle(ev('error', { errorMessage: 'boom', canRetry: false }))).toEqual([
      { type: 'error', sessionId: 'main', message: 'boom', canRetry: false },
    ])
    expect(m.state).toBe('ERROR')
    m.handle(ev('turn_start', {}))
    expect(m.state).toBe('IDLE')
  })

  test('an error being retried does not enter ERROR', () => {
    const m = main()
    m.handle(ev('error', { errorMessage: 'overloaded', canRetry: true }))
    expect(m.state).toBe('IDLE')
  })

  test('interrupt closes open streams and tools and shows the notice', () => {
    const m = main()
    m.handle(ev('assistant_text_start', {}))
    m.handle(ev('assistant_text_delta', { content: 'half' }))
    expect(m.handle(ev('interrupt', {}))).toEqual([{ type: 'interrupt', sessionId: 'main' }])
    expect(m.state).toBe('IDLE')
  })

  test('back-to-back interrupts (a replayed aborted tool result, then its aborted turn) show one notice', () => {
    const m = main()
    expect(m.handle(ev('interrupt', {}), 'replay')).toEqual([{ type: 'interrupt', sessionId: 'main' }])
    expect(m.handle(ev('interrupt', {}), 'replay')).toEqual([])
    m.handle(ev('turn_start', {}), 'replay')
    expect(m.handle(ev('interrupt', {}), 'replay')).toEqual([{ type: 'interrupt', sessionId: 'main' }])
  })

  test('user_message is shown only in a replay', () => {
    expect(main().handle(ev('user_message', { content: 'hi' }))).toEqual([])
    expect(main().handle(ev('user_message', { content: 'hi' }), 'replay')).toEqual([
      { type: 'user_prompt', sessionId: 'main', text: 'hi' },
    ])
  })

  test('a replayed developer message is a notice with its text', () => {
    const item = {
      role: 'developer' as const,
      id: 'd',
      createdAt: 0,
      parts: [{ type: 'text' as const, text: 'be brief' }],
    }
    expect(main().handle(ev('developer_message', { item }), 'replay')).toEqual([
      { type: 'notice', sessionId: 'main', text: 'developer: be brief' },
    ])
  })

  test('welcome becomes the banner', () => {
    expect(main().handle(ev('welcome', { workDir: '/w', model: 'm', provider: 'p' }))).toEqual([
      { type: 'welcome', sessionId: 'main', workDir: '/w', model: 'm', provider: 'p' },
    ])
  })

  test('assistant_image_delta shows the image reference', () => {
    expect(main().handle(ev('assistant_image_delta', { filePath: 'out.png' }))).toEqual([
      { type: 'image', sessionId: 'main', ref: 'out.png' },
    ])
  })

  test('an unknown event type renders nothing and does not throw', () => {
    const unknown = { type: 'brand_new', sessionId: 'main', timestamp: 0 } as never
    expect(main().handle(unknown)).toEqual([])
  })
})

describe('sub-agent session', () => {
  test('task_start becomes a status line with the description', () => {
    const m = new DisplayStateMachine('child', {
      kind: 'sub_agent',
      name: 'explore',
      description: 'find createAgent',
      color: 1,
    })
    expect(m.handle(ev('task_start', { sessionId: 'child' }))).toEqual([
      {
        type: 'sub_agent_status',
        sessionId: 'child',
        name: 'explore',
        color: 1,
        tone: 'start',
        text: 'find createAgent',
      },
    ])
  })

  test('streams no text', () => {
    const m = sub()
    expect(m.handle(ev('assistant_text_start', { sessionId: 'child' }))).toEqual([])
    expect(m.handle(ev('assistant_text_delta', { sessionId: 'child', content: 'secret' }))).toEqual([])
    expect(m.state).toBe('STREAMING_TEXT')
  })

  test('a tool result is one status line', () => {
    const m = sub()
    m.handle(
      ev('tool_call', {
        sessionId: 'child',
        toolCallId: 'c',
        toolName: 'read_file',
        arguments: '{"path":"a.ts"}',
      }),
    )
    expect(m.state).toBe('TOOL_EXECUTING')
    expect(
      m.handle(
        ev('tool_result', {
          sessionId: 'child',
          toolCallId: 'c',
          toolName: 'read_file',
          result: '1| x',
          status: 'success',
          isLastInTurn: true,
        }),
      ),
    ).toEqual([
      {
        type: 'sub_agent_status',
        sessionId: 'child',
        name: 'explore',
        color: 1,
        tone: 'ok',
        text: 'read_file a.ts → 1| x',
      },
    ])
  })

  test('task_finish closes with the totals', () => {
    const m = sub()
    m.handle(ev('task_metadata', { sessionId: 'child', metadata: { main: { turnCount: 3 }, subAgents: [] } }))
    const [command] = m.handle(
      ev('task_finish', {
        sessionId: 'child',
        taskResult: '',
        hasStructuredOutput: false,
        reason: 'completed',
      }),
    )
    expect(command).toMatchObject({ tone: 'done', text: 'done · 3 turns' })
  })

  test('its usage is not shown', () => {
    const m = sub()
    m.handle(ev('usage', { sessionId: 'child', usage: { outputTokens: 3 } }))
    expect(m.handle(ev('turn_end', { sessionId: 'child' }))).toEqual([])
  })
})
