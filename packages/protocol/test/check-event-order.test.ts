import { checkEventOrder, type Event, type OrderRule } from '@kode/protocol'
import { describe, expect, test } from 'vitest'

type Spec = { type: string } & Record<string, unknown>

/** Builds a sequence for one session ("s") unless an event names its own; timestamps ascend. */
function seq(...specs: Spec[]): Event[] {
  return specs.map((spec, i) => ({ sessionId: 's', timestamp: 1000 + i, ...spec }) as Event)
}
const rules = (events: Event[]): OrderRule[] => checkEventOrder(events).map((v) => v.rule)

const r = 'resp_1'
const taskOpen = [{ type: 'task_start' }, { type: 'user_message', content: 'hi' }, { type: 'turn_start' }]
const taskClose = [
  { type: 'turn_end' },
  { type: 'task_finish', taskResult: 'done', hasStructuredOutput: false },
]
const fullResponse = [
  { type: 'thinking_start', responseId: r },
  { type: 'thinking_delta', responseId: r, content: 'hmm' },
  { type: 'thinking_end', responseId: r },
  { type: 'assistant_text_start', responseId: r },
  { type: 'assistant_text_delta', responseId: r, content: 'Hello' },
  { type: 'assistant_text_end', responseId: r },
  { type: 'response_complete', responseId: r, content: 'Hello', thinkingText: 'hmm' },
  { type: 'usage', responseId: r, usage: { inputTokens: 3, outputTokens: 1 } },
]

describe('valid sequences have no violations', () => {
  test('a text-only task', () => {
    expect(checkEventOrder(seq(...taskOpen, ...fullResponse, ...taskClose))).toEqual([])
  })

  test('text, then a tool call that closes the text, then the result, then a second turn', () => {
    const events = seq(
      ...taskOpen,
      { type: 'assistant_text_start', responseId: r },
      { type: 'assistant_text_delta', responseId: r, content: 'Reading' },
      { type: 'assistant_text_end', responseId: r },
      { type: 'tool_call_start', responseId: r, toolCallId: 'c1', toolName: 'read' },
      { type: 'response_complete', responseId: r, content: 'Reading' },
      { type: 'tool_call', responseId: r, toolCallId: 'c1', toolName: 'read', arguments: '{}' },
      {
        type: 'tool_result',
        responseId: r,
        toolCallId: 'c1',
        toolName: 'read',
        result: 'x',
        status: 'success',
        isLastInTurn: true,
      },
      { type: 'turn_end' },
      { type: 'turn_start' },
      { type: 'assistant_text_start', responseId: 'resp_2' },
      { type: 'assistant_text_delta', responseId: 'resp_2', content: 'Done' },
      { type: 'assistant_text_end', responseId: 'resp_2' },
      { type: 'response_complete', responseId: 'resp_2', content: 'Done' },
      ...taskClose,
      { type: 'end', sessionId: '__app__' },
    )
    expect(checkEventOrder(events)).toEqual([])
  })

  test('an interrupt after closing streams, with aborted tool results, and no response_complete', () => {
    const events = seq(
      ...taskOpen,
      { type: 'assistant_text_start', responseId: r },
      { type: 'assistant_text_delta', responseId: r, content: 'Part' },
      { type: 'assistant_text_end', responseId: r },
      { type: 'interrupt' },
      ...taskClose,
    )
    expect(checkEventOrder(events)).toEqual([])
  })

  test('interleaved sessions are checked independently', () => {
    const events = seq(
      { type: 'task_start' },
      { type: 'turn_start' },
      { type: 'assistant_text_start', responseId: r },
      { type: 'task_start', sessionId: 'sub' },
      { type: 'turn_start', sessionId: 'sub' },
      { type: 'assistant_text_start', sessionId: 'sub', responseId: 'x' },
      { type: 'assistant_text_delta', responseId: r, content: 'a' },
      { type: 'assistant_text_end', sessionId: 'sub', responseId: 'x' },
      { type: 'response_complete', sessionId: 'sub', responseId: 'x', content: '' },
      { type: 'turn_end', sessionId: 'sub' },
      { type: 'task_finish', sessionId: 'sub', taskResult: '', hasStructuredOutput: false },
      { type: 'assistant_text_end', responseId: r },
      { type: 'response_complete', responseId: r, content: 'a' },
      ...taskClose,
    )
    expect(checkEventOrder(events)).toEqual([])
  })

  test('an errored turn needs no response_complete', () => {
    const events = seq(
      ...taskOpen,
      { type: 'assistant_text_start', responseId: r },
      { type: 'assistant_text_end', responseId: r },
      { type: 'error', errorMessage: 'cut', canRetry: false },
      ...taskClose,
    )
    expect(checkEventOrder(events)).toEqual([])
  })

  test('the budget before a call inside its turn, the measured figure anywhere', () => {
    const budget = { type: 'context_usage', contextPercent: 1, contextTokens: 2, estimated: true }
    const measured = { type: 'context_usage', contextPercent: 2 }
    expect(rules(seq(...taskOpen, budget, ...fullResponse, measured, ...taskClose, measured))).toEqual([])
  })

  test('an unknown event type from a newer producer is tolerated', () => {
    expect(checkEventOrder(seq(...taskOpen, { type: 'future_thing' }, ...taskClose))).toEqual([])
  })
})

describe('each invariant has a failing case', () => {
  const cases: [OrderRule, Spec[]][] = [
    ['thinking_delta_without_start', [{ type: 'thinking_delta', content: 'x' }]],
    [
      'thinking_start_nested',
      [{ type: 'thinking_start' }, { type: 'thinking_start' }, { type: 'thinking_end' }],
    ],
    ['thinking_end_without_start', [{ type: 'thinking_end' }]],
    ['thinking_not_ended', [{ type: 'thinking_start' }]],
    ['text_delta_without_start', [{ type: 'assistant_text_delta', content: 'x' }]],
    [
      'text_start_nested',
      [{ type: 'assistant_text_start' }, { type: 'assistant_text_start' }, { type: 'assistant_text_end' }],
    ],
    ['text_end_without_start', [{ type: 'assistant_text_end' }]],
    ['text_not_ended', [{ type: 'assistant_text_start' }]],
    [
      'streams_overlap',
      [
        { type: 'thinking_start' },
        { type: 'assistant_text_start' },
        { type: 'assistant_text_end' },
        { type: 'thinking_end' },
      ],
    ],
    [
      'tool_call_start_during_text',
      [
        { type: 'assistant_text_start' },
        { type: 'tool_call_start', toolCallId: 'c', toolName: 't' },
        { type: 'assistant_text_end' },
      ],
    ],
    [
      'response_complete_while_streaming',
      [
        { type: 'assistant_text_start' },
        { type: 'response_complete', content: '' },
        { type: 'assistant_text_end' },
      ],
    ],
    [
      'response_complete_twice',
      [
        { type: 'turn_start' },
        { type: 'response_complete', content: '' },
        { type: 'response_complete', content: '' },
        { type: 'turn_end' },
      ],
    ],
    [
      'response_complete_after_interrupt',
      [
        { type: 'turn_start' },
        { type: 'interrupt' },
        { type: 'response_complete', content: '' },
        { type: 'turn_end' },
      ],
    ],
    [
      'response_incomplete',
      [
        { type: 'turn_start' },
        { type: 'assistant_text_start' },
        { type: 'assistant_text_end' },
        { type: 'turn_end' },
      ],
    ],
    [
      'stream_after_response_complete',
      [
        { type: 'response_complete', responseId: r, content: '' },
        { type: 'assistant_text_start', responseId: r },
        { type: 'assistant_text_end', responseId: r },
      ],
    ],
    [
      'interrupt_while_streaming',
      [{ type: 'thinking_start' }, { type: 'interrupt' }, { type: 'thinking_end' }],
    ],
    ['turn_start_nested', [{ type: 'turn_start' }, { type: 'turn_start' }, { type: 'turn_end' }]],
    ['turn_end_without_start', [{ type: 'turn_end' }]],
    ['turn_not_ended', [{ type: 'turn_start' }]],
    [
      'task_start_nested',
      [
        { type: 'task_start' },
        { type: 'task_start' },
        { type: 'task_finish', taskResult: '', hasStructuredOutput: false },
      ],
    ],
    ['task_finish_without_start', [{ type: 'task_finish', taskResult: '', hasStructuredOutput: false }]],
    ['task_not_finished', [{ type: 'task_start' }]],
    [
      'tool_result_without_call',
      [
        {
          type: 'tool_result',
          toolCallId: 'c9',
          toolName: 't',
          result: '',
          status: 'error',
          isLastInTurn: true,
        },
      ],
    ],
    [
      'tool_result_twice',
      [
        { type: 'tool_call', toolCallId: 'c1', toolName: 't', arguments: '{}' },
        {
          type: 'tool_result',
          toolCallId: 'c1',
          toolName: 't',
          result: '',
          status: 'success',
          isLastInTurn: true,
        },
        {
          type: 'tool_result',
          toolCallId: 'c1',
          toolName: 't',
          result: '',
          status: 'success',
          isLastInTurn: true,
        },
      ],
    ],
    [
      'tool_call_without_result',
      [
        { type: 'task_start' },
        { type: 'tool_call', toolCallId: 'c1', toolName: 't', arguments: '{}' },
        { type: 'task_finish', taskResult: '', hasStructuredOutput: false },
      ],
    ],
    [
      'end_not_last',
      [
        { type: 'end', sessionId: '__app__' },
        { type: 'welcome', workDir: '/' },
      ],
    ],
    ['budget_outside_turn', [{ type: 'context_usage', contextPercent: 1, estimated: true }]],
  ]

  test('every rule is covered by a case below', () => {
    expect(new Set(cases.map(([rule]) => rule)).size).toBe(cases.length)
  })

  test.each(cases)('%s', (rule, specs) => {
    expect(rules(seq(...specs))).toEqual([rule])
  })

  test('a violation names the event index and session', () => {
    const [violation] = checkEventOrder(
      seq(
        { type: 'welcome', workDir: '/' },
        { type: 'assistant_text_delta', sessionId: 'sub', content: 'x' },
      ),
    )
    expect(violation).toEqual({
      index: 1,
      sessionId: 'sub',
      rule: 'text_delta_without_start',
      message: 'assistant_text_delta before assistant_text_start',
    })
  })
})

describe('tool approval', () => {
  const request = { type: 'tool_approval_request', toolCallId: 'c1', toolName: 'rm', arguments: '{}' }
  const decision = { type: 'tool_approval_decision', toolCallId: 'c1', toolName: 'rm', approved: true }
  const callAndResult = (status: 'success' | 'error') => [
    { type: 'tool_call', toolCallId: 'c1', toolName: 'rm', arguments: '{}' },
    { type: 'tool_result', toolCallId: 'c1', toolName: 'rm', result: 'x', status, isLastInTurn: true },
  ]

  test('a request, then the decision, then the call runs: valid', () => {
    expect(rules(seq(...taskOpen, request, decision, ...callAndResult('success'), ...taskClose))).toEqual([])
  })

  test('a task may finish with the call still awaiting its decision', () => {
    expect(rules(seq(...taskOpen, request, ...taskClose))).toEqual([])
  })

  test('an interrupt may answer a call that awaits approval (not as a success)', () => {
    expect(rules(seq(...taskOpen, request, ...callAndResult('error'), ...taskClose))).toEqual([])
  })

  test('a call that succeeds before its decision ran without approval', () => {
    expect(rules(seq(...taskOpen, request, ...callAndResult('success'), ...taskClose))).toEqual([
      'tool_ran_without_approval',
    ])
  })

  test('a second request for the same call', () => {
    expect(rules(seq(...taskOpen, request, request, ...taskClose))).toEqual(['approval_requested_twice'])
  })
})

describe('sub-agent approval, progress and compaction', () => {
  const call = { type: 'tool_call', toolCallId: 'p1', toolName: 'writer', arguments: '{}' }
  const result = {
    type: 'tool_result',
    toolCallId: 'p1',
    toolName: 'writer',
    result: 'x',
    status: 'success',
    isLastInTurn: true,
  }
  const finish = (reason: string) => [
    { type: 'turn_end' },
    { type: 'task_finish', taskResult: '', hasStructuredOutput: false, reason },
  ]
  const progress = { type: 'tool_progress', toolCallId: 'p1', toolName: 'writer', message: 'half way' }
  const start = { type: 'compaction_start', reason: 'threshold', tokensBefore: 10 }
  const end = { type: 'compaction_end', reason: 'threshold', compacted: true, tokensBefore: 10 }

  test('a task that ends awaiting approval may leave the call whose sub-agent waits without a result', () => {
    expect(rules(seq(...taskOpen, call, ...finish('awaiting_approval')))).toEqual([])
    expect(rules(seq(...taskOpen, call, ...finish('completed')))).toEqual(['tool_call_without_result'])
  })

  test('the task that carries a paused one on answers its waiting call without announcing it again', () => {
    const paused = [...taskOpen, call, ...finish('awaiting_approval')]
    expect(rules(seq(...paused, ...taskOpen, result, ...taskClose))).toEqual([])
    expect(rules(seq(...paused, ...taskOpen, call, result, ...taskClose))).toEqual(['tool_call_twice'])
  })

  test('progress belongs between its call and its result', () => {
    expect(rules(seq(...taskOpen, call, progress, result, ...taskClose))).toEqual([])
    expect(rules(seq(...taskOpen, progress, call, result, ...taskClose))).toEqual(['progress_outside_call'])
    expect(rules(seq(...taskOpen, call, result, progress, ...taskClose))).toEqual(['progress_outside_call'])
  })

  test('compaction_start and compaction_end pair up', () => {
    expect(rules(seq(start, end, ...taskOpen, start, end, ...taskClose))).toEqual([])
    expect(rules(seq(start, start, end))).toEqual(['compaction_start_nested'])
    expect(rules(seq(end))).toEqual(['compaction_end_without_start'])
    expect(rules(seq(start))).toEqual(['compaction_not_ended'])
  })
})
