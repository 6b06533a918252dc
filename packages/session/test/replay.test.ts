import {
  checkEventOrder,
  type HistoryEvent,
  type ReplayEvent,
  type ToolProgressRecord,
  type ToolResultMessage,
  validateEvent,
} from '@kode/protocol'
import {
  createMemorySessionStore,
  createReplayDeriver,
  deriveReplayEvents,
  replaySession,
} from '@kode/session'
import { describe, expect, test } from 'vitest'
import { generateSession } from '../../../test/history/generate-session.js'
import { callIds, HistoryBuilder } from '../../../test/history/history.js'

// One test per rule of seed 000's "Replay derivation" (and the turn/ordering rules around it).

const replay = (history: HistoryEvent[], subSessions?: Map<string, HistoryEvent[]>) =>
  deriveReplayEvents(history, { sessionId: 'main', ...(subSessions ? { subSessions } : {}) })

/** `type` of each event, with the session id when it is not the main one; join(' ') to compare. */
const shape = (events: ReplayEvent[]) =>
  events.map((e) => (e.sessionId === 'main' ? e.type : `${e.sessionId}:${e.type}`))

const ofType = <T extends ReplayEvent['type']>(events: ReplayEvent[], type: T) =>
  events.filter((e): e is Extract<ReplayEvent, { type: T }> => e.type === type)

describe('chat messages', () => {
  test('a user message becomes user_message with its text joined and no images field when it has none', () => {
    const h = new HistoryBuilder()
    const user = h.user('hello')
    user.parts.push({ type: 'text', text: ' world' })
    expect(replay([user])).toEqual([
      { type: 'user_message', sessionId: 'main', timestamp: user.createdAt, content: 'hello world' },
    ])
  })

  test("a user message's images are carried on user_message", () => {
    const h = new HistoryBuilder()
    const image = { type: 'image_file' as const, path: 'a.png', mimeType: 'image/png' }
    const url = { type: 'image_url' as const, url: 'https://example.com/b.png' }
    expect(ofType(replay([h.user('look', [image, url])]), 'user_message')[0]?.images).toEqual([image, url])
  })

  test('a developer message becomes developer_message carrying the message', () => {
    const h = new HistoryBuilder()
    const developer = h.developer('<reminder>')
    expect(replay([developer])).toEqual([
      { type: 'developer_message', sessionId: 'main', timestamp: developer.createdAt, item: developer },
    ])
  })

  test('system messages are not replayed', () => {
    const h = new HistoryBuilder()
    expect(shape(replay([h.system('prompt'), h.user('hi'), h.system('new prompt')]))).toEqual([
      'user_message',
    ])
  })
})

describe('assistant messages', () => {
  test('response_complete joins the text parts in order and the thinking parts as thinkingText', () => {
    const h = new HistoryBuilder()
    const answer = h.assistant(
      [
        { type: 'thinking_text', text: 'hmm ' },
        { type: 'thinking_signature', signature: 's', format: 'anthropic', model: 'm' },
        { type: 'text', text: 'one ' },
        { type: 'tool_call', id: 'c', name: 'x', argumentsJson: '{}' },
        { type: 'thinking_text', text: 'more' },
        { type: 'text', text: 'two' },
      ],
      { responseId: 'resp_1' },
    )
    expect(ofType(replay([answer]), 'response_complete')).toEqual([
      {
        type: 'response_complete',
        sessionId: 'main',
        timestamp: answer.createdAt,
        responseId: 'resp_1',
        content: 'one two',
        thinkingText: 'hmm more',
      },
    ])
  })

  test('response_complete has no thinkingText when the message has no thinking', () => {
    const h = new HistoryBuilder()
    expect(ofType(replay([h.assistant('plain')]), 'response_complete')[0]).not.toHaveProperty('thinkingText')
  })

  test('image parts become assistant_image_delta events, before response_complete', () => {
    const h = new HistoryBuilder()
    const answer = h.assistant([
      { type: 'text', text: 'here' },
      { type: 'image_file', path: 'out/cat.png', mimeType: 'image/png' },
      { type: 'image_url', url: 'data:image/png;base64,AAAA' },
    ])
    const events = replay([answer])
    expect(shape(events).join(' ')).toBe(
      'turn_start assistant_image_delta assistant_image_delta response_complete turn_end',
    )
    expect(ofType(events, 'assistant_image_delta').map(({ filePath, url }) => ({ filePath, url }))).toEqual([
      { filePath: 'out/cat.png', url: undefined },
      { filePath: undefined, url: 'data:image/png;base64,AAAA' },
    ])
  })

  test('usage comes from the message usage, with its cost', () => {
    const h = new HistoryBuilder()
    const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 }
    const answer = h.assistant('x', { usage, costUsd: 0.25, responseId: 'r' })
    expect(ofType(replay([answer]), 'usage')).toEqual([
      {
        type: 'usage',
        sessionId: 'main',
        timestamp: answer.createdAt,
        responseId: 'r',
        usage,
        costUsd: 0.25,
      },
    ])
  })

  test('no usage event for a message without usage', () => {
    const h = new HistoryBuilder()
    expect(ofType(replay([h.assistant('x')]), 'usage')).toEqual([])
  })

  test('no usage event for an error response', () => {
    const h = new HistoryBuilder()
    const usage = { inputTokens: 10 }
    const history = [
      h.assistant('partial', { usage, isApiError: true, errorMessage: 'reset', stopReason: 'error' }),
      h.assistant('partial', { usage, stopReason: 'error' }),
    ]
    expect(ofType(replay(history), 'usage')).toEqual([])
  })
})

describe('tools', () => {
  test('each tool call part becomes tool_call with the raw arguments, in call order, before the first result', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['read_file', 'grep'], { responseId: 'r1' })
    const [a, b] = callIds(ask) as [string, string]
    const events = replay([ask, h.result(b, 'grep', 'B'), h.result(a, 'read_file', 'A')])
    // The engine starts a response's calls together: they are announced before any result.
    expect(shape(events).join(' ')).toBe(
      'turn_start response_complete tool_call tool_call tool_result tool_result turn_end',
    )
    expect(ofType(events, 'tool_call')).toEqual([
      {
        type: 'tool_call',
        sessionId: 'main',
        timestamp: ask.createdAt,
        responseId: 'r1',
        toolCallId: a,
        toolName: 'read_file',
        arguments: '{"k":0}',
      },
      {
        type: 'tool_call',
        sessionId: 'main',
        timestamp: ask.createdAt,
        responseId: 'r1',
        toolCallId: b,
        toolName: 'grep',
        arguments: '{"k":1}',
      },
    ])
  })

  test('a tool result becomes tool_result with outputText, uiExtra, task metadata and status', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['edit'], { responseId: 'r1' })
    const result = h.result(callIds(ask)[0]!, 'edit', 'patched', {
      status: 'error',
      uiExtra: { type: 'diff', diff: '-a\n+b' },
      taskMetadata: { turnCount: 2 },
    })
    expect(ofType(replay([ask, result]), 'tool_result')).toEqual([
      {
        type: 'tool_result',
        sessionId: 'main',
        timestamp: result.createdAt,
        responseId: 'r1',
        toolCallId: callIds(ask)[0],
        toolName: 'edit',
        result: 'patched',
        uiExtra: { type: 'diff', diff: '-a\n+b' },
        status: 'error',
        taskMetadata: { turnCount: 2 },
        isLastInTurn: true,
      },
    ])
  })

  test('an aborted tool result is reported as error, followed by an interrupt', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['bash'])
    const events = replay([ask, h.result(callIds(ask)[0]!, 'bash', 'stopped', { status: 'aborted' })])
    expect(shape(events).slice(2).join(' ')).toBe('tool_call tool_result interrupt turn_end')
    expect(ofType(events, 'tool_result')[0]?.status).toBe('error')
  })

  test('a failed (error) tool result is not an interrupt', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['bash'])
    const events = replay([ask, h.result(callIds(ask)[0]!, 'bash', 'boom', { status: 'error' })])
    expect(shape(events)).not.toContain('interrupt')
  })

  test('isLastInTurn is true only for the last result of a turn', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['a', 'b'])
    const [a, b] = callIds(ask) as [string, string]
    const events = replay([ask, h.result(a, 'a', ''), h.error('blip'), h.result(b, 'b', ''), h.user('next')])
    expect(ofType(events, 'tool_result').map((e) => e.isLastInTurn)).toEqual([false, true])
  })

  test('a call that never got a result is announced with the others', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['a', 'b'])
    const [a, b] = callIds(ask) as [string, string]
    const events = replay([ask, h.result(b, 'b', ''), h.user('after a crash')])
    expect(
      events
        .filter((e) => e.type === 'tool_call' || e.type === 'tool_result')
        .map((e) => `${e.type}:${'toolCallId' in e ? e.toolCallId : ''}`),
    ).toEqual([`tool_call:${a}`, `tool_call:${b}`, `tool_result:${b}`])
    expect(shape(events).slice(-3).join(' ')).toBe('tool_result turn_end user_message')
  })

  test('calls that never got a result are replayed at the end of their turn', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['a', 'b'])
    const events = replay([ask, h.user('after a crash')])
    expect(shape(events).join(' ')).toBe(
      'turn_start response_complete tool_call tool_call turn_end user_message',
    )
  })

  test('the replay of a history cut anywhere in its calls announces the calls where the whole history does', () => {
    // A process that dies leaves a prefix; the task that carries it on emits only results and
    // `turn_end` (its calls were announced). So the prefix's replay, without its closing
    // `turn_end`, then those results, must be the replay of the whole history.
    const h = new HistoryBuilder()
    const ask = h.calls(['a', 'b', 'c'])
    const [a, b, c] = callIds(ask) as [string, string, string]
    const progress: ToolProgressRecord = {
      type: 'tool_progress',
      id: 'p1',
      createdAt: ask.createdAt,
      toolCallId: b,
      toolName: 'b',
      message: 'half way',
      siblingToolCallIds: [a, c],
    }
    const body: (ToolProgressRecord | ToolResultMessage)[] = [
      progress,
      h.result(a, 'a', 'A'),
      h.result(b, 'b', 'B'),
      h.result(c, 'c', 'C'),
    ]
    // Which event for which call (a cut history cannot know which result is the last of its turn).
    const steps = (events: readonly ReplayEvent[]) =>
      events.map((e) => ('toolCallId' in e ? `${e.type}:${e.toolCallId}` : e.type))
    const whole = steps(replay([ask, ...body]))
    expect(whole.slice(0, 7)).toEqual([
      'turn_start',
      'response_complete',
      `tool_call:${a}`,
      `tool_call:${b}`,
      `tool_call:${c}`,
      `tool_progress:${b}`,
      `tool_result:${a}`,
    ])
    for (let cut = 0; cut <= body.length; cut++) {
      const prefix = steps(replay([ask, ...body.slice(0, cut)]))
      expect(prefix.pop()).toBe('turn_end')
      // What a task carrying the cut history on emits (a rerun call may report progress again).
      const continued = body
        .slice(cut)
        .map((record) => `${'role' in record ? 'tool_result' : 'tool_progress'}:${record.toolCallId}`)
      expect([...prefix, ...continued, 'turn_end']).toEqual(whole)
    }
  })

  test('a todo list result with the todo_change side effect is followed by todo_change', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['todo_write'])
    const todos = [{ content: 'write tests', status: 'in_progress' as const }]
    const result = h.result(callIds(ask)[0]!, 'todo_write', 'ok', {
      uiExtra: { type: 'todo_list', todos },
      sideEffects: ['todo_change'],
    })
    const events = replay([ask, result])
    expect(shape(events).slice(3, 5).join(' ')).toBe('tool_result todo_change')
    expect(ofType(events, 'todo_change')[0]).toEqual({
      type: 'todo_change',
      sessionId: 'main',
      timestamp: result.createdAt,
      todos,
    })
  })
})

describe('interrupts', () => {
  test('an aborted assistant message ends its turn with an interrupt, after its tool results', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['bash'], { stopReason: 'aborted' })
    const events = replay([ask, h.result(callIds(ask)[0]!, 'bash', 'done'), h.user('next')])
    expect(shape(events).join(' ')).toBe(
      'turn_start response_complete tool_call tool_result interrupt turn_end user_message',
    )
  })

  test('an aborted turn whose tool results were aborted gets an interrupt after each result and one at its end', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['bash', 'grep'], { stopReason: 'aborted' })
    const [a, b] = callIds(ask) as [string, string]
    const events = replay([
      ask,
      h.result(a, 'bash', 'stopped', { status: 'aborted' }),
      h.result(b, 'grep', 'stopped', { status: 'aborted' }),
    ])
    // Seed 000: "emit InterruptEvent at the end of that turn" and "also ... after the tool result".
    expect(shape(events).join(' ')).toBe(
      'turn_start response_complete tool_call tool_call tool_result interrupt tool_result interrupt interrupt turn_end',
    )
    expect(checkEventOrder(events)).toEqual([])
  })

  test('an interrupt record becomes interrupt', () => {
    const h = new HistoryBuilder()
    const record = h.interrupt()
    expect(replay([h.user('go'), record]).at(-1)).toEqual({
      type: 'interrupt',
      sessionId: 'main',
      timestamp: record.createdAt,
    })
  })
})

describe('turns', () => {
  test('turn_start precedes an assistant message at the start or after a user, developer or tool message', () => {
    const h = new HistoryBuilder()
    const first = h.calls(['a'])
    const history = [
      first,
      h.result(callIds(first)[0]!, 'a', ''),
      h.assistant('after tool'),
      h.user('u'),
      h.assistant('after user'),
      h.developer('d'),
      h.assistant('after developer'),
    ]
    expect(shape(replay(history)).join(' ')).toBe(
      [
        'turn_start response_complete tool_call tool_result turn_end',
        'turn_start response_complete turn_end user_message',
        'turn_start response_complete turn_end developer_message',
        'turn_start response_complete turn_end',
      ].join(' '),
    )
  })

  // Where seed 000's need_turn_start would start no turn, Kode still does (docs/sessions.md says why).

  test('deviation: two assistant messages in a row are two turns, one response_complete each', () => {
    const h = new HistoryBuilder()
    const events = replay([h.assistant('a', { stopReason: 'aborted' }), h.assistant('b')])
    expect(shape(events).join(' ')).toBe(
      'turn_start response_complete interrupt turn_end turn_start response_complete turn_end',
    )
    expect(checkEventOrder(events)).toEqual([])
  })

  test('deviation: after an error or interrupt record inside a turn, an assistant message starts a new turn', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['a'])
    const events = replay([
      ask,
      h.result(callIds(ask)[0]!, 'a', ''),
      h.error('529 overloaded', true),
      h.assistant('retried'),
      h.interrupt(),
      h.assistant('again'),
    ])
    expect(shape(events).join(' ')).toBe(
      [
        'turn_start response_complete tool_call tool_result error turn_end',
        'turn_start response_complete interrupt turn_end',
        'turn_start response_complete turn_end',
      ].join(' '),
    )
    expect(checkEventOrder(events)).toEqual([])
  })

  test('deviation: after a system message or a record outside any turn, an assistant message starts a turn', () => {
    const h = new HistoryBuilder()
    const events = replay([
      h.user('u'),
      h.system('prompt'),
      h.assistant('after system'),
      h.taskMetadata(1),
      h.assistant('after task metadata'),
      h.user('u2'),
      h.error('529 overloaded', true),
      h.assistant('after error'),
    ])
    expect(shape(events).join(' ')).toBe(
      [
        'user_message turn_start response_complete turn_end',
        'task_metadata turn_start response_complete turn_end',
        'user_message error turn_start response_complete turn_end',
      ].join(' '),
    )
  })

  test('an error record stays inside the turn; a task metadata record comes after it', () => {
    const h = new HistoryBuilder()
    const error = h.error('overloaded', true)
    const metadata = h.taskMetadata(1)
    const events = replay([h.assistant('a'), error, metadata])
    expect(shape(events).join(' ')).toBe('turn_start response_complete error turn_end task_metadata')
    expect(events[2]).toEqual({
      type: 'error',
      sessionId: 'main',
      timestamp: error.createdAt,
      errorMessage: 'overloaded',
      canRetry: true,
    })
    expect(events[4]).toEqual({
      type: 'task_metadata',
      sessionId: 'main',
      timestamp: metadata.createdAt,
      metadata: metadata.metadata,
    })
  })

  test("a retry's notice opens the turn of the response that follows, billed or not, as live", () => {
    const h = new HistoryBuilder()
    const user = h.user('u')
    const notice = { ...h.error('429 rate limited (retrying in 1 ms)', true), retry: true as const }
    const billed = {
      ...h.error('stream cut (retrying in 1 ms)', true),
      usage: { inputTokens: 10, outputTokens: 2 },
    }
    const events = replay([user, notice, billed, h.assistant('a'), h.taskMetadata(1)])
    expect(shape(events).join(' ')).toBe(
      'user_message turn_start error error response_complete turn_end task_metadata',
    )
    expect(events[2]).toEqual({
      type: 'error',
      sessionId: 'main',
      timestamp: notice.createdAt,
      errorMessage: '429 rate limited (retrying in 1 ms)',
      canRetry: true,
    })
    // Without `retry` or `usage`, a retryable error is where the open turn is: none here.
    const other = replay([h.user('u2'), h.error('529 overloaded', true), h.assistant('b')])
    expect(shape(other).join(' ')).toBe('user_message error turn_start response_complete turn_end')
    expect(checkEventOrder(events)).toEqual([])
  })

  test("turn_end carries the time of the turn's latest record", () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['a'])
    const result = h.result(callIds(ask)[0]!, 'a', '')
    expect(replay([ask, result]).at(-1)).toEqual({
      type: 'turn_end',
      sessionId: 'main',
      timestamp: result.createdAt,
    })
  })
})

describe('approvals', () => {
  test('a call approved in a later task replays in a turn of its own, as agent.continue emitted it', () => {
    const h = new HistoryBuilder()
    const user = h.user('write a')
    const ask = h.calls(['write_file'], { responseId: 'r1' })
    const [id] = callIds(ask)
    const request: HistoryEvent = {
      type: 'approval_request',
      id: 'q1',
      createdAt: ask.createdAt + 1,
      toolCallId: id!,
      toolName: 'write_file',
      arguments: '{"k":0}',
      responseId: 'r1',
    }
    const paused = h.taskMetadata(1)
    const decision: HistoryEvent = {
      type: 'approval_decision',
      id: 'd1',
      createdAt: paused.createdAt + 1,
      toolCallId: id!,
      toolName: 'write_file',
      approved: true,
    }
    const result = h.result(id!, 'write_file', 'wrote a')
    const events = replay([
      user,
      ask,
      request,
      paused,
      decision,
      result,
      h.assistant('done'),
      h.taskMetadata(1),
    ])
    expect(checkEventOrder(events)).toEqual([])
    expect(shape(events).join(' ')).toBe(
      'user_message turn_start response_complete tool_approval_request turn_end task_metadata ' +
        'turn_start tool_approval_decision tool_call tool_result turn_end ' +
        'turn_start response_complete turn_end task_metadata',
    )
    expect(ofType(events, 'tool_call')[0]).toMatchObject({ responseId: 'r1', timestamp: ask.createdAt })
  })
})

describe("a sub-agent's approval recorded in its parent", () => {
  /** The parent's history: its call ran a sub-agent that paused for `w1`, then the decision. */
  function parentHistory(subAgentResponseId?: string): HistoryEvent[] {
    const h = new HistoryBuilder()
    const ask = h.calls(['writer'], { responseId: 'r-parent' })
    const [id] = callIds(ask)
    const request: HistoryEvent = {
      type: 'approval_request',
      id: 'q1',
      createdAt: ask.createdAt + 1,
      toolCallId: 'w1',
      toolName: 'write_file',
      arguments: '{}',
      responseId: 'r-parent',
      sessionId: 'child',
      subAgentCall: { toolCallId: id!, sessionId: 'child' },
      ...(subAgentResponseId !== undefined ? { subAgentResponseId } : {}),
    }
    const paused = h.taskMetadata(1)
    const decision: HistoryEvent = {
      type: 'approval_decision',
      id: 'd1',
      createdAt: paused.createdAt + 1,
      toolCallId: 'w1',
      toolName: 'write_file',
      approved: true,
      sessionId: 'child',
    }
    return [h.user('write'), ask, request, paused, decision]
  }
  const approvalEvents = (events: ReplayEvent[]) =>
    events.filter((e) => e.type === 'tool_approval_request' || e.type === 'tool_approval_decision')

  test("without the sub-agent's session, the request and its decision carry the sub-agent's response id", () => {
    const events = approvalEvents(replay(parentHistory('r-child')))
    expect(events.map((e) => [e.type, e.sessionId, e.responseId])).toEqual([
      ['tool_approval_request', 'child', 'r-child'],
      ['tool_approval_decision', 'child', 'r-child'],
    ])
  })

  /**
   * A parent whose call `p` ran the sub-agent `child`, which paused for `w1`; approved, the
   * sub-agent carried on and `p` got its result (`link`: whether it links the sub-agent's session).
   */
  function carriedOn(link: boolean) {
    const h = new HistoryBuilder()
    let records = 0
    const base = () => ({ id: `q${++records}`, createdAt: 1_700_000_000_000 })
    const ask = h.assistant([{ type: 'tool_call', id: 'p', name: 'writer', argumentsJson: '{}' }], {
      stopReason: 'tool_use',
      responseId: 'r-parent',
    })
    const childAsk = h.assistant([{ type: 'tool_call', id: 'w1', name: 'write_file', argumentsJson: '{}' }], {
      stopReason: 'tool_use',
      responseId: 'r-child',
    })
    const request = {
      type: 'approval_request',
      toolCallId: 'w1',
      toolName: 'write_file',
      arguments: '{}',
    } as const
    const decision = {
      type: 'approval_decision',
      toolCallId: 'w1',
      toolName: 'write_file',
      approved: true,
    } as const
    const child: HistoryEvent[] = [
      h.user('write'),
      childAsk,
      { ...base(), ...request, responseId: 'r-child' },
      h.taskMetadata(1),
      { ...base(), ...decision },
      h.result('w1', 'write_file', 'wrote'),
      h.assistant('wrote it'),
      h.taskMetadata(1),
    ]
    const parent: HistoryEvent[] = [
      h.user('go'),
      ask,
      {
        ...base(),
        ...request,
        responseId: 'r-parent',
        sessionId: 'child',
        subAgentCall: { toolCallId: 'p', sessionId: 'child' },
        subAgentResponseId: 'r-child',
      },
      h.taskMetadata(1),
      { ...base(), ...decision, sessionId: 'child' },
      h.result('p', 'writer', 'wrote it', link ? { uiExtra: { type: 'session', sessionId: 'child' } } : {}),
      h.assistant('done'),
      h.taskMetadata(1),
    ]
    return { parent, subSessions: new Map([['child', child]]) }
  }

  test("the sub-agent's first task replays where it ran, in the parent's first task; the rest before the parent's result", () => {
    const { parent, subSessions } = carriedOn(true)
    const events = replay(parent, subSessions)
    expect(checkEventOrder(events)).toEqual([])
    expect(shape(events).join(' ')).toBe(
      'user_message turn_start response_complete tool_call ' +
        'child:user_message child:turn_start child:response_complete child:tool_approval_request ' +
        'child:turn_end child:task_metadata turn_end task_metadata ' +
        'turn_start child:turn_start child:tool_approval_decision child:tool_call child:tool_result ' +
        'child:turn_end child:turn_start child:response_complete child:turn_end child:task_metadata ' +
        'tool_result turn_end turn_start response_complete turn_end task_metadata',
    )
    // Read a record at a time, the same.
    const deriver = createReplayDeriver({ sessionId: 'main', subSessions })
    expect([...parent.flatMap((record) => deriver.push([record])), ...deriver.end()]).toEqual(events)
  })

  test("a parent's result that does not link the sub-agent's session: the parent shows the request and the decision", () => {
    const { parent, subSessions } = carriedOn(false)
    const events = replay(parent, subSessions)
    expect(checkEventOrder(events)).toEqual([])
    expect(shape(events).join(' ')).toBe(
      'user_message turn_start response_complete tool_call child:tool_approval_request turn_end task_metadata ' +
        'turn_start child:tool_approval_decision tool_result turn_end turn_start response_complete turn_end task_metadata',
    )
  })

  test("a parent still paused: the sub-agent's task that asked replays inline at the parent's request", () => {
    const { parent, subSessions } = carriedOn(true)
    const child = subSessions.get('child')!
    // Both histories as they stand while the call awaits its decision.
    const pausedChild = new Map([['child', child.slice(0, 4)]])
    const events = replay(parent.slice(0, 4), pausedChild)
    expect(checkEventOrder(events)).toEqual([])
    expect(shape(events).join(' ')).toBe(
      'user_message turn_start response_complete tool_call ' +
        'child:user_message child:turn_start child:response_complete child:tool_approval_request ' +
        'child:turn_end child:task_metadata turn_end task_metadata',
    )
    const deriver = createReplayDeriver({ sessionId: 'main', subSessions: pausedChild })
    expect([...parent.slice(0, 4).flatMap((record) => deriver.push([record])), ...deriver.end()]).toEqual(
      events,
    )
  })

  test("a sub-agent's call denied by a new user message: its task replays inline, the parent shows the denial", () => {
    const { parent, subSessions } = carriedOn(false)
    const h = new HistoryBuilder()
    const pausedChild = new Map([['child', subSessions.get('child')!.slice(0, 4)]])
    const decision = parent[4]!
    const dismissed: HistoryEvent[] = [
      ...parent.slice(0, 4),
      h.user('never mind'),
      { ...decision, approved: false, reason: 'a new message' } as HistoryEvent,
      h.result('p', 'writer', 'denied', { status: 'error' }),
      h.assistant('fine'),
      h.taskMetadata(1),
    ]
    const events = replay(dismissed, pausedChild)
    expect(checkEventOrder(events)).toEqual([])
    expect(shape(events).join(' ')).toBe(
      'user_message turn_start response_complete tool_call ' +
        'child:user_message child:turn_start child:response_complete child:tool_approval_request ' +
        'child:turn_end child:task_metadata turn_end task_metadata ' +
        'user_message turn_start child:tool_approval_decision tool_result turn_end ' +
        'turn_start response_complete turn_end task_metadata',
    )
    const denial = approvalEvents(events).at(-1)!
    expect([denial.sessionId, denial.responseId]).toEqual(['child', 'r-child'])
    const deriver = createReplayDeriver({ sessionId: 'main', subSessions: pausedChild })
    expect([...dismissed.flatMap((record) => deriver.push([record])), ...deriver.end()]).toEqual(events)
  })

  test('two sub-agents paused for calls of the same id: each decision carries its own session and response id', () => {
    // Call ids are unique within a session only (some servers number them afresh per response):
    // the engine keys a pending call by its session and id, and so does the replay.
    const h = new HistoryBuilder()
    const ask = h.assistant(
      [
        { type: 'tool_call', id: 'p1', name: 'writer', argumentsJson: '{}' },
        { type: 'tool_call', id: 'p2', name: 'writer', argumentsJson: '{}' },
      ],
      { stopReason: 'tool_use', responseId: 'r-parent' },
    )
    const request = (child: string, via: string): HistoryEvent => ({
      type: 'approval_request',
      id: `q-${child}`,
      createdAt: ask.createdAt + 1,
      toolCallId: 'call_0',
      toolName: 'write_file',
      arguments: '{}',
      responseId: 'r-parent',
      sessionId: child,
      subAgentCall: { toolCallId: via, sessionId: child },
      subAgentResponseId: `r-${child}`,
    })
    const decision = (child: string, approved: boolean): HistoryEvent => ({
      type: 'approval_decision',
      id: `d-${child}`,
      createdAt: ask.createdAt + 3,
      toolCallId: 'call_0',
      toolName: 'write_file',
      approved,
      sessionId: child,
    })
    const history = [
      h.user('write both'),
      ask,
      request('kid-a', 'p1'),
      request('kid-b', 'p2'),
      h.taskMetadata(1),
      decision('kid-a', true),
      decision('kid-b', false),
    ]
    const events = approvalEvents(replay(history))
    expect(events.map((e) => [e.type, e.sessionId, e.responseId])).toEqual([
      ['tool_approval_request', 'kid-a', 'r-kid-a'],
      ['tool_approval_request', 'kid-b', 'r-kid-b'],
      ['tool_approval_decision', 'kid-a', 'r-kid-a'],
      ['tool_approval_decision', 'kid-b', 'r-kid-b'],
    ])
  })

  test("a call of this session and a sub-agent's of the same id, both awaiting approval: each decided on its own", () => {
    const h = new HistoryBuilder()
    const ask = h.assistant(
      [
        { type: 'tool_call', id: 'call_0', name: 'write_file', argumentsJson: '{}' },
        { type: 'tool_call', id: 'call_1', name: 'writer', argumentsJson: '{}' },
      ],
      { stopReason: 'tool_use', responseId: 'r-parent' },
    )
    const base = { toolCallId: 'call_0', toolName: 'write_file', createdAt: ask.createdAt + 1 }
    const history: HistoryEvent[] = [
      h.user('write'),
      ask,
      { type: 'approval_request', id: 'q1', ...base, arguments: '{}', responseId: 'r-parent' },
      {
        type: 'approval_request',
        id: 'q2',
        ...base,
        arguments: '{}',
        responseId: 'r-parent',
        sessionId: 'kid',
        subAgentCall: { toolCallId: 'call_1', sessionId: 'kid' },
        subAgentResponseId: 'r-kid',
      },
      h.taskMetadata(1),
      { type: 'approval_decision', id: 'd1', ...base, approved: true },
      { type: 'approval_decision', id: 'd2', ...base, approved: false, sessionId: 'kid' },
    ]
    const events = approvalEvents(replay(history))
    expect(events.map((e) => [e.type, e.sessionId, e.responseId])).toEqual([
      ['tool_approval_request', 'main', 'r-parent'],
      ['tool_approval_request', 'kid', 'r-kid'],
      ['tool_approval_decision', 'main', 'r-parent'],
      ['tool_approval_decision', 'kid', 'r-kid'],
    ])
  })

  test("a sub-agent's call denied by a new user message, where the sub-agent decided its own sub-agent's call of that id before", () => {
    const { parent, subSessions } = carriedOn(false)
    const h = new HistoryBuilder()
    // An earlier task of the sub-agent: its own sub-agent `grand` asked for a call `w1` too, decided.
    const via = h.assistant([{ type: 'tool_call', id: 'g', name: 'helper', argumentsJson: '{}' }], {
      stopReason: 'tool_use',
      responseId: 'r-child-0',
    })
    const grand = {
      toolCallId: 'w1',
      toolName: 'write_file',
      createdAt: via.createdAt + 1,
      sessionId: 'grand',
    }
    const earlier: HistoryEvent[] = [
      h.user('first'),
      via,
      {
        type: 'approval_request',
        id: 'gq',
        ...grand,
        arguments: '{}',
        subAgentCall: { toolCallId: 'g', sessionId: 'grand' },
      },
      h.taskMetadata(1),
      { type: 'approval_decision', id: 'gd', ...grand, approved: true },
      h.result('g', 'helper', 'done'),
      h.assistant('done'),
      h.taskMetadata(1),
    ]
    const pausedChild = new Map([['child', [...earlier, ...subSessions.get('child')!.slice(0, 4)]]])
    const decision = parent[4]!
    const dismissed: HistoryEvent[] = [
      ...parent.slice(0, 4),
      h.user('never mind'),
      { ...decision, approved: false, reason: 'a new message' } as HistoryEvent,
      h.result('p', 'writer', 'denied', { status: 'error' }),
    ]
    const events = replay(dismissed, pausedChild)
    expect(checkEventOrder(events)).toEqual([])
    // Its task that asked replays inline, where it ran: before the parent's paused task ends.
    const request = events.findIndex((e) => e.type === 'tool_approval_request' && e.sessionId === 'child')
    expect(events[request]).toMatchObject({ toolCallId: 'w1', responseId: 'r-child' })
    expect(
      events.slice(0, request).filter((e) => e.sessionId === 'child' && e.type === 'user_message'),
    ).toHaveLength(2)
    expect(request).toBeLessThan(
      events.findIndex((e) => e.type === 'task_metadata' && e.sessionId === 'main'),
    )
    // The sub-agent never got this decision: the parent shows it, as live.
    const denial = approvalEvents(events).at(-1)!
    expect([denial.type, denial.sessionId, denial.responseId]).toEqual([
      'tool_approval_decision',
      'child',
      'r-child',
    ])
    const deriver = createReplayDeriver({ sessionId: 'main', subSessions: pausedChild })
    expect([...dismissed.flatMap((record) => deriver.push([record])), ...deriver.end()]).toEqual(events)
  })

  test("a history recorded without the sub-agent's response id replays the parent's, as before", () => {
    const events = approvalEvents(replay(parentHistory()))
    expect(events.map((e) => [e.type, e.sessionId, e.responseId])).toEqual([
      ['tool_approval_request', 'child', 'r-parent'],
      ['tool_approval_decision', 'child', 'r-parent'],
    ])
  })
})

describe('compaction', () => {
  test('a manual compaction record comes between tasks as compaction_start then compaction_end; the summarised records are replayed in full', () => {
    const h = new HistoryBuilder()
    const user = h.user('go')
    const ask = h.calls(['read_file'])
    const result = h.result(callIds(ask)[0]!, 'read_file', 'file text')
    const kept = h.calls(['list_dir'])
    const keptResult = h.result(callIds(kept)[0]!, 'list_dir', 'a b')
    const ended = h.taskMetadata(2)
    const compaction = {
      ...h.compaction('The user asked to read a file; it said "file text".', kept.id),
      reason: 'manual' as const,
    }
    const events = replay([user, ask, result, kept, keptResult, ended, compaction])
    expect(shape(events).join(' ')).toBe(
      'user_message turn_start response_complete tool_call tool_result turn_end turn_start response_complete tool_call tool_result turn_end task_metadata compaction_start compaction_end',
    )
    expect(events.slice(-2)).toEqual([
      {
        type: 'compaction_start',
        sessionId: 'main',
        timestamp: compaction.createdAt,
        reason: 'manual',
        tokensBefore: 9_000,
      },
      {
        type: 'compaction_end',
        sessionId: 'main',
        timestamp: compaction.createdAt,
        reason: 'manual',
        compacted: true,
        tokensBefore: 9_000,
        tokensAfter: 1_200,
        summary: compaction.summary,
        firstKeptId: kept.id,
      },
    ])
    expect(checkEventOrder(events)).toEqual([])
    for (const event of events) validateEvent(event)
  })

  test('a manual compaction of a session a dead process left mid-turn keeps that turn open, as the next task carries it on', () => {
    const h = new HistoryBuilder()
    const user = h.user('go')
    const ask = h.calls(['read_file'])
    const result = h.result(callIds(ask)[0]!, 'read_file', 'file text')
    // The process died while this call ran: no result, no task_metadata.
    const running = h.calls(['list_dir'], { responseId: 'r-running' })
    const compaction = {
      ...h.compaction('The user asked to read a file; it said "file text".', running.id),
      reason: 'manual' as const,
    }
    const settled = h.result(callIds(running)[0]!, 'list_dir', 'stopped', { status: 'error' })
    const events = replay([user, ask, result, running, compaction, settled])
    // The call was announced live before the process died; the compaction came after it.
    expect(shape(events).join(' ')).toBe(
      'user_message turn_start response_complete tool_call tool_result turn_end turn_start response_complete tool_call compaction_start compaction_end tool_result turn_end',
    )
    expect(events.at(-2)).toMatchObject({ type: 'tool_result', responseId: 'r-running' })
    expect(checkEventOrder(events)).toEqual([])
  })

  test('an automatic compaction record opens the turn of the response that follows, as it ran live before that model call', () => {
    const h = new HistoryBuilder()
    const user = h.user('go')
    const ask = h.calls(['read_file'])
    const result = h.result(callIds(ask)[0]!, 'read_file', 'file text')
    const compaction = h.compaction('The user asked to read a file.', result.id)
    const answer = h.assistant('done')
    const events = replay([user, ask, result, compaction, answer])
    expect(shape(events).join(' ')).toBe(
      'user_message turn_start response_complete tool_call tool_result turn_end turn_start compaction_start compaction_end response_complete turn_end',
    )
    expect(checkEventOrder(events)).toEqual([])
    // A history that ends at it (the process died before the model answered) closes that turn.
    expect(
      shape(replay([user, ask, result, compaction]))
        .slice(-4)
        .join(' '),
    ).toBe('turn_start compaction_start compaction_end turn_end')
  })

  test("an error or interrupt record's turn places it: in a turn of its own, between turns, or (absent) in the open turn", () => {
    const h = new HistoryBuilder()
    const user = h.user('go')
    const ask = h.calls(['read_file'])
    const result = h.result(callIds(ask)[0]!, 'read_file', 'file text')
    const own = { ...h.error('Invalid model'), turn: 'own' as const }
    const none = { ...h.interrupt(), turn: 'none' as const }
    const before = 'user_message turn_start response_complete tool_call tool_result'
    expect(shape(replay([user, ask, result, own, h.taskMetadata(2)])).join(' ')).toBe(
      `${before} turn_end turn_start error turn_end task_metadata`,
    )
    expect(shape(replay([user, ask, result, none, h.taskMetadata(1)])).join(' ')).toBe(
      `${before} turn_end interrupt task_metadata`,
    )
    expect(shape(replay([user, ask, result, h.error('Invalid model'), h.taskMetadata(2)])).join(' ')).toBe(
      `${before} error turn_end task_metadata`,
    )
    expect(shape(replay([user, { ...h.interrupt(), turn: 'own' as const }])).join(' ')).toBe(
      'user_message turn_start interrupt turn_end',
    )
  })

  test('an error record marking a failed compaction becomes its compaction_start and compaction_end, with its message, in the turn it ran in', () => {
    const h = new HistoryBuilder()
    const user = h.user('go')
    const ask = h.calls(['read_file'])
    const result = h.result(callIds(ask)[0]!, 'read_file', 'file text')
    const failed = {
      ...h.error('The summary failed: down'),
      compaction: { reason: 'threshold' as const, tokensBefore: 3_000 },
    }
    const events = replay([user, ask, result, failed, h.assistant('done'), h.taskMetadata(2)])
    expect(shape(events).join(' ')).toBe(
      'user_message turn_start response_complete tool_call tool_result turn_end turn_start compaction_start compaction_end response_complete turn_end task_metadata',
    )
    const at = { sessionId: 'main', timestamp: failed.createdAt, reason: 'threshold', tokensBefore: 3_000 }
    expect(events.slice(7, 9)).toEqual([
      { type: 'compaction_start', ...at },
      { type: 'compaction_end', ...at, compacted: false, errorMessage: 'The summary failed: down' },
    ])
    expect(checkEventOrder(events)).toEqual([])
    for (const event of events) validateEvent(event)
  })

  test('an interrupt record marking an interrupted compaction becomes its events, without errorMessage; a manual one between tasks', () => {
    const h = new HistoryBuilder()
    const user = h.user('go')
    const answer = h.assistant('done')
    const interrupted = {
      ...h.interrupt(),
      compaction: { reason: 'manual' as const, tokensBefore: 3_000 },
    }
    const events = replay([user, answer, h.taskMetadata(1), interrupted, h.user('again')])
    expect(shape(events).join(' ')).toBe(
      'user_message turn_start response_complete turn_end task_metadata compaction_start compaction_end user_message',
    )
    expect(events[6]).toEqual({
      type: 'compaction_end',
      sessionId: 'main',
      timestamp: interrupted.createdAt,
      reason: 'manual',
      compacted: false,
      tokensBefore: 3_000,
    })
    expect(checkEventOrder(events)).toEqual([])
  })

  test("a compaction's summary retries replay as retryable errors between its compaction_start and compaction_end, saved or not", () => {
    const h = new HistoryBuilder()
    const user = h.user('go')
    const ask = h.calls(['read_file'])
    const result = h.result(callIds(ask)[0]!, 'read_file', 'file text')
    const notices = ['503 busy (retrying in 1 ms)', '503 busy (retrying in 2 ms)']
    const saved = { ...h.compaction('The user asked to read a file.', result.id), retries: notices }
    const failed = {
      ...h.error('The summary failed: down'),
      compaction: { reason: 'manual' as const, tokensBefore: 3_000, retries: notices.slice(0, 1) },
    }
    const events = replay([user, ask, result, saved, h.assistant('done'), h.taskMetadata(2), failed])
    expect(shape(events).join(' ')).toBe(
      'user_message turn_start response_complete tool_call tool_result turn_end turn_start compaction_start error error compaction_end response_complete turn_end task_metadata compaction_start error compaction_end',
    )
    const retries = events.filter((e) => e.type === 'error')
    expect(retries).toEqual([
      {
        type: 'error',
        sessionId: 'main',
        timestamp: saved.createdAt,
        errorMessage: notices[0],
        canRetry: true,
      },
      {
        type: 'error',
        sessionId: 'main',
        timestamp: saved.createdAt,
        errorMessage: notices[1],
        canRetry: true,
      },
      {
        type: 'error',
        sessionId: 'main',
        timestamp: failed.createdAt,
        errorMessage: notices[0],
        canRetry: true,
      },
    ])
    expect(checkEventOrder(events)).toEqual([])
    for (const event of events) validateEvent(event)
  })

  test("two compactions before one model call (the threshold's, then an overflow's) share that call's turn", () => {
    const h = new HistoryBuilder()
    const user = h.user('go')
    const ask = h.calls(['read_file'])
    const result = h.result(callIds(ask)[0]!, 'read_file', 'file text')
    const first = h.compaction('The user asked to read a file.', result.id)
    const overflow = {
      ...h.error('The summary failed: down'),
      compaction: { reason: 'overflow' as const, tokensBefore: 3_000 },
    }
    const tooLarge = { ...h.error('The request does not fit'), turn: 'own' as const }
    const events = replay([user, ask, result, first, overflow, tooLarge, h.taskMetadata(2)])
    expect(shape(events).slice(5).join(' ')).toBe(
      'turn_end turn_start compaction_start compaction_end compaction_start compaction_end error turn_end task_metadata',
    )
    expect(checkEventOrder(events)).toEqual([])
  })
})

describe('sub-agent sessions', () => {
  function parentAndChild() {
    const h = new HistoryBuilder()
    const ask = h.calls(['task'])
    const link = h.result(callIds(ask)[0]!, 'task', 'child said hi', {
      uiExtra: { type: 'session', sessionId: 'child' },
    })
    const c = new HistoryBuilder(5)
    const child = [c.user('sub task'), c.assistant('hi')]
    return { history: [ask, link], child }
  }

  test('a linked child session is replayed under its own id between the spawning call and its result', () => {
    const { history, child } = parentAndChild()
    expect(shape(replay(history, new Map([['child', child]]))).join(' ')).toBe(
      'turn_start response_complete tool_call child:user_message child:turn_start child:response_complete child:turn_end tool_result turn_end',
    )
  })

  test('a link to a session not given is replayed without it', () => {
    const { history } = parentAndChild()
    expect(shape(replay(history)).join(' ')).toBe(
      'turn_start response_complete tool_call tool_result turn_end',
    )
  })

  test('links that form a cycle replay each session once', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['task'])
    const back = [
      ask,
      h.result(callIds(ask)[0]!, 'task', '', { uiExtra: { type: 'session', sessionId: 'main' } }),
    ]
    const events = replay(back, new Map([['main', back]]))
    expect(shape(events).join(' ')).toBe('turn_start response_complete tool_call tool_result turn_end')
  })

  test('replaySession loads linked sessions, nested ones too, from the store', async () => {
    const store = createMemorySessionStore()
    const { history, subSessions } = generateSession({ seed: 3, tasks: 30, sessionId: 'main' })
    await store.create({ id: 'main' })
    await store.append('main', history)
    for (const [id, events] of subSessions) {
      await store.create({ id, parentSessionId: 'main', subAgent: { name: 'explore' } })
      await store.append(id, events)
    }
    expect(subSessions.size).toBeGreaterThan(0)
    expect(await replaySession(store, 'main')).toEqual(
      deriveReplayEvents(history, { sessionId: 'main', subSessions }),
    )
  })
})

describe('the whole derivation', () => {
  test('events carry the given session id, or an empty one by default', () => {
    const h = new HistoryBuilder()
    expect(deriveReplayEvents([h.user('x')])[0]?.sessionId).toBe('')
  })

  test.each([1, 2, 3, 4, 5])(
    'a generated session (seed %i) replays into valid events in a valid order',
    (seed) => {
      const { history, subSessions } = generateSession({ seed, tasks: 80, sessionId: 'main' })
      const events = deriveReplayEvents(history, { sessionId: 'main', subSessions })
      expect(checkEventOrder(events)).toEqual([])
      for (const event of events) expect(() => validateEvent(event)).not.toThrow()
    },
  )
})
