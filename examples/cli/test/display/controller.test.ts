import { checkEventOrder, type Event } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { DisplayController } from '../../src/display/controller.js'
import type { RenderCommand } from '../../src/display/render-commands.js'
import { ev } from '../helpers/events.js'

function controller(main = 'main') {
  const commands: RenderCommand[] = []
  return { display: new DisplayController(main, { render: (c) => commands.push(c) }), commands }
}

// Two sub-agents running concurrently while the main session waits on their tool calls.
const interleaved: Event[] = [
  ev('task_start', {}),
  ev('turn_start', {}),
  ev('tool_call', {
    toolCallId: 'a',
    toolName: 'explore',
    arguments: '{"prompt":"p","description":"first"}',
  }),
  ev('tool_call', {
    toolCallId: 'b',
    toolName: 'explore',
    arguments: '{"prompt":"q","description":"second"}',
  }),
  ev('task_start', {
    sessionId: 's1',
    subAgentState: { name: 'explore', parentSessionId: 'main', description: 'first' },
  }),
  ev('task_start', {
    sessionId: 's2',
    subAgentState: { name: 'explore', parentSessionId: 'main', description: 'second' },
  }),
  ev('turn_start', { sessionId: 's1' }),
  ev('assistant_text_start', { sessionId: 's2' }),
  ev('turn_start', { sessionId: 's2' }),
  ev('assistant_text_start', { sessionId: 's1' }),
  ev('assistant_text_delta', { sessionId: 's1', content: 'child text' }),
  ev('assistant_text_delta', { sessionId: 's2', content: 'other child text' }),
  ev('assistant_text_end', { sessionId: 's1' }),
  ev('assistant_text_end', { sessionId: 's2' }),
  ev('task_finish', { sessionId: 's2', taskResult: 'b', hasStructuredOutput: false, reason: 'completed' }),
  ev('task_finish', { sessionId: 's1', taskResult: 'a', hasStructuredOutput: false, reason: 'completed' }),
  ev('tool_result', {
    toolCallId: 'a',
    toolName: 'explore',
    result: 'a',
    status: 'success',
    isLastInTurn: false,
  }),
  ev('tool_result', {
    toolCallId: 'b',
    toolName: 'explore',
    result: 'b',
    status: 'success',
    isLastInTurn: true,
  }),
]

describe('DisplayController', () => {
  test('routes each session to its own machine', () => {
    const { display } = controller()
    display.handle(ev('assistant_text_start', {}))
    display.handle(ev('thinking_start', { sessionId: 's1' }))
    expect(display.machine('main')?.state).toBe('STREAMING_TEXT')
    expect(display.machine('s1')?.state).toBe('THINKING')
  })

  test('a task_start with subAgentState makes the session a sub-agent with its own colour', () => {
    const { display } = controller()
    for (const event of interleaved.slice(0, 6)) display.handle(event)
    expect(display.machine('s1')?.role).toEqual({
      kind: 'sub_agent',
      name: 'explore',
      description: 'first',
      color: 0,
    })
    expect(display.machine('s2')?.role).toEqual({
      kind: 'sub_agent',
      name: 'explore',
      description: 'second',
      color: 1,
    })
  })

  test('interleaved sub-agent events never stream text, only status lines in their colours', () => {
    const { display, commands } = controller()
    for (const event of interleaved) display.handle(event)
    expect(commands.some((c) => c.type === 'text_line' || c.type === 'text_partial')).toBe(false)
    const status = commands.flatMap((c) =>
      c.type === 'sub_agent_status' ? [[c.sessionId, c.tone, c.color]] : [],
    )
    expect(status).toEqual([
      ['s1', 'start', 0],
      ['s2', 'start', 1],
      ['s2', 'done', 1],
      ['s1', 'done', 0],
    ])
    expect(commands.filter((c) => c.type === 'tool_done').map((c) => c.sessionId)).toEqual(['main', 'main'])
  })

  test('main text keeps streaming while a sub-agent interleaves', () => {
    const { display, commands } = controller()
    display.handle(ev('assistant_text_start', {}))
    display.handle(ev('assistant_text_delta', { content: 'one ' }))
    display.handle(
      ev('tool_call', { sessionId: 's1', toolCallId: 'x', toolName: 'read_file', arguments: '{}' }),
    )
    display.handle(ev('assistant_text_delta', { content: 'two\n' }))
    expect(commands.filter((c) => c.type === 'text_line')).toEqual([
      { type: 'text_line', sessionId: 'main', line: { kind: 'prose', text: 'one two' } },
    ])
  })

  test('replay_history goes through the same machines, sub-agents named by the tool result linking them', () => {
    const { display, commands } = controller()
    const events = [
      ev('user_message', { content: 'hello' }),
      ev('turn_start', {}),
      ev('response_complete', { content: 'Looking.' }),
      ev('tool_call', { toolCallId: 'a', toolName: 'explore', arguments: '{}' }),
      ev('turn_start', { sessionId: 'kid' }),
      ev('response_complete', { sessionId: 'kid', content: 'child answer' }),
      ev('tool_call', { sessionId: 'kid', toolCallId: 'k', toolName: 'list_dir', arguments: '{}' }),
      ev('tool_result', {
        sessionId: 'kid',
        toolCallId: 'k',
        toolName: 'list_dir',
        result: 'a/',
        status: 'success',
        isLastInTurn: true,
      }),
      ev('turn_end', { sessionId: 'kid' }),
      ev('tool_result', {
        toolCallId: 'a',
        toolName: 'explore',
        result: 'done',
        status: 'success',
        isLastInTurn: true,
        uiExtra: { type: 'session', sessionId: 'kid' },
      }),
      ev('turn_end', {}),
    ] as const
    expect(checkEventOrder([...events])).toEqual([])
    display.handle(ev('replay_history', { events: [...events], updatedAt: 0, isLoad: true }))
    expect(commands.map((c) => c.type)).toEqual([
      'user_prompt',
      'text_line',
      'tool_start',
      'sub_agent_status',
      'tool_done',
    ])
    expect(commands[3]).toMatchObject({ name: 'explore', sessionId: 'kid' })
  })

  test('a tool result linking several sub-agents names every one of them in replay', () => {
    const { display, commands } = controller()
    const child = (sessionId: string) => [
      ev('turn_start', { sessionId }),
      ev('response_complete', { sessionId, content: `${sessionId} answer` }),
      ev('tool_call', { sessionId, toolCallId: `${sessionId}-k`, toolName: 'list_dir', arguments: '{}' }),
      ev('tool_result', {
        sessionId,
        toolCallId: `${sessionId}-k`,
        toolName: 'list_dir',
        result: 'a/',
        status: 'success',
        isLastInTurn: true,
      }),
      ev('turn_end', { sessionId }),
    ]
    const events = [
      ev('user_message', { content: 'hello' }),
      ev('turn_start', {}),
      ev('tool_call', { toolCallId: 'a', toolName: 'fan_out', arguments: '{}' }),
      ...child('kid-1'),
      ...child('kid-2'),
      ev('tool_result', {
        toolCallId: 'a',
        toolName: 'fan_out',
        result: 'interrupted',
        status: 'error',
        isLastInTurn: true,
        uiExtra: { type: 'session', sessionId: 'kid-1', moreSessionIds: ['kid-2'] },
      }),
      ev('turn_end', {}),
    ] as const
    display.handle(ev('replay_history', { events: [...events], updatedAt: 0, isLoad: true }))
    const named = commands.filter((c) => c.type === 'sub_agent_status')
    expect(named).toEqual([
      expect.objectContaining({ name: 'fan_out', sessionId: 'kid-1' }),
      expect.objectContaining({ name: 'fan_out', sessionId: 'kid-2' }),
    ])
  })

  test('end shuts the display down', () => {
    const { display, commands } = controller()
    display.handle({ type: 'end', sessionId: '__app__', timestamp: 0 })
    expect(commands).toEqual([{ type: 'shutdown', sessionId: '__app__' }])
  })

  test('setMainSession makes another session the main one', () => {
    const { display, commands } = controller()
    display.setMainSession('other')
    display.handle(ev('assistant_text_start', { sessionId: 'other' }))
    display.handle(ev('assistant_text_delta', { sessionId: 'other', content: 'x\n' }))
    expect(commands.filter((c) => c.type === 'text_line')).toHaveLength(1)
  })
})

describe('an interrupt while a sub-agent runs', () => {
  // The order the engine emits: the parent's call of the sub-agent ends first, then the
  // sub-agent winds down, then the parent's own interrupt.
  const events: Event[] = [
    ev('task_start', {}),
    ev('tool_call', { toolCallId: 'c1', toolName: 'explore', arguments: '{"prompt":"p"}' }),
    ev('task_start', {
      sessionId: 's1',
      subAgentState: { name: 'explore', parentSessionId: 'main', parentToolCallId: 'c1' },
    }),
    ev('tool_call', { sessionId: 's1', toolCallId: 'k1', toolName: 'search_text', arguments: '{}' }),
    ev('tool_result', {
      toolCallId: 'c1',
      toolName: 'explore',
      result: 'stopped',
      status: 'error',
      isLastInTurn: true,
    }),
    ev('tool_result', {
      sessionId: 's1',
      toolCallId: 'k1',
      toolName: 'search_text',
      result: 'stopped',
      status: 'error',
      isLastInTurn: true,
    }),
    ev('interrupt', { sessionId: 's1' }),
    ev('task_finish', { sessionId: 's1', taskResult: '', hasStructuredOutput: false, reason: 'aborted' }),
    ev('interrupt', {}),
    ev('task_finish', { taskResult: '', hasStructuredOutput: false, reason: 'aborted' }),
  ]

  test("the sub-agent's lines come first, then the call that ran it, then the parent's interrupt", () => {
    const { display, commands } = controller()
    for (const event of events) display.handle(event)
    const lines = commands.flatMap((c) =>
      c.type === 'sub_agent_status'
        ? [`sub ${c.text}`]
        : c.type === 'tool_done'
          ? [`main ${c.toolName} ${c.status}`]
          : c.type === 'interrupt'
            ? [`main interrupt`]
            : [],
    )
    expect(lines.at(-1)).toBe('main interrupt')
    const explore = lines.indexOf('main explore error')
    expect(explore).toBeGreaterThan(0)
    expect(lines.slice(0, explore).filter((l) => l.startsWith('sub '))).toEqual([
      'sub started',
      expect.stringContaining('search_text'),
      'sub interrupted',
      expect.stringContaining('aborted'),
    ])
    expect(lines.slice(explore + 1)).toEqual(['main interrupt'])
  })
})
