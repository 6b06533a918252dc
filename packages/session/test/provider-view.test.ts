import { type HistoryEvent, type Message, validateHistoryEvent } from '@kode/protocol'
import { INCOMPLETE_CALL_TEXT, MISSING_RESULT_TEXT, ProviderView, toProviderMessages } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { generateSession } from './helpers/generate-session.js'
import { callIds, HistoryBuilder, shortConversation } from './helpers/history.js'

const ids = (messages: Message[]) => messages.map((m) => m.id)

describe('provider view rules', () => {
  test('a complete conversation is sent as it is, the very same message objects', () => {
    const history = shortConversation()
    const view = toProviderMessages(history)
    expect(view).toEqual(history)
    for (const [i, message] of view.entries()) expect(message).toBe(history[i])
  })

  test('a dangling tool call at the end gets a synthetic error result right after its message', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['bash'])
    const view = toProviderMessages([h.user('go'), ask])
    expect(view).toHaveLength(3)
    expect(view[2]).toEqual({
      role: 'tool',
      id: `${callIds(ask)[0]}:missing-result`,
      createdAt: ask.createdAt,
      toolCallId: callIds(ask)[0],
      toolName: 'bash',
      status: 'error',
      outputText: MISSING_RESULT_TEXT,
      parts: [],
    })
    expect(() => validateHistoryEvent(view[2])).not.toThrow()
  })

  test('synthetic results come after the real results of the same message, before the next message', () => {
    const h = new HistoryBuilder()
    const go = h.user('go')
    const ask = h.calls(['a', 'b', 'c'])
    const [a, b, c] = callIds(ask) as [string, string, string]
    const realB = h.result(b, 'b', 'ok')
    const next = h.user('next')
    const view = toProviderMessages([go, ask, realB, next])
    expect(view.map((m) => (m.role === 'tool' ? `${m.toolCallId}:${m.status}` : m.id))).toEqual([
      go.id,
      ask.id,
      `${b}:success`,
      `${a}:error`,
      `${c}:error`,
      next.id,
    ])
  })

  test('a call whose arguments were cut off gets a result saying it was not run', () => {
    const h = new HistoryBuilder()
    const ask = h.assistant([
      { type: 'tool_call', id: 'c1', name: 'bash', argumentsJson: '{"cmd":"l', incomplete: true },
    ])
    const view = toProviderMessages([h.user('go'), ask])
    expect(view[2]).toMatchObject({ toolCallId: 'c1', status: 'error', outputText: INCOMPLETE_CALL_TEXT })
  })

  test('a result after a non-tool message answers nothing and is dropped', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['bash'])
    const late = h.result(callIds(ask)[0]!, 'bash', 'late')
    const user = h.user('meanwhile')
    const view = toProviderMessages([ask, user, late])
    expect(ids(view)).toEqual([ask.id, `${callIds(ask)[0]}:missing-result`, user.id])
  })

  test('a second result for the same call is dropped', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['bash'])
    const first = h.result(callIds(ask)[0]!, 'bash', 'one')
    const second = h.result(callIds(ask)[0]!, 'bash', 'two')
    expect(ids(toProviderMessages([ask, first, second]))).toEqual([ask.id, first.id])
  })

  test('aborted assistant messages stay', () => {
    const h = new HistoryBuilder()
    const aborted = h.assistant('half an ans', { stopReason: 'aborted' })
    const history = [h.user('go'), aborted, h.user('continue')]
    expect(toProviderMessages(history)).toEqual(history)
  })

  test('an assistant message with no parts is not sent', () => {
    const h = new HistoryBuilder()
    const history = [h.user('go'), h.assistant([], { stopReason: 'aborted' }), h.user('again')]
    expect(ids(toProviderMessages(history))).toEqual(['m1', 'm3'])
  })

  test('developer messages stay as their own messages, in place', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['bash'])
    const history = [
      h.user('go'),
      h.developer('reminder'),
      ask,
      h.result(callIds(ask)[0]!, 'bash', 'ok'),
      h.developer('after tool'),
    ]
    expect(toProviderMessages(history)).toEqual(history)
  })

  test('error, interrupt and task metadata records are not sent', () => {
    const h = new HistoryBuilder()
    const user = h.user('go')
    const answer = h.assistant('hi')
    const view = toProviderMessages([h.interrupt(), user, h.error('529', true), answer, h.taskMetadata(1)])
    expect(ids(view)).toEqual([user.id, answer.id])
  })

  test('records between tool results do not end the tool group', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['a', 'b'])
    const [a, b] = callIds(ask) as [string, string]
    const ra = h.result(a, 'a', 'ok')
    const rb = h.result(b, 'b', 'ok')
    expect(ids(toProviderMessages([ask, ra, h.error('blip'), rb]))).toEqual([ask.id, ra.id, rb.id])
  })

  test('only the latest system message is sent, first', () => {
    const h = new HistoryBuilder()
    const old = h.system('old prompt')
    const user = h.user('go')
    const current = h.system('new prompt')
    const answer = h.assistant('ok')
    expect(ids(toProviderMessages([old, user, current, answer]))).toEqual([current.id, user.id, answer.id])
  })
})

describe('incremental conversion', () => {
  const { history } = generateSession({ seed: 7, tasks: 60, sessionId: 'inc' })

  test('updating record by record gives the same view as converting each prefix whole', () => {
    const view = new ProviderView()
    for (let n = 0; n <= history.length; n++) {
      expect(view.update(history.slice(0, n))).toEqual(toProviderMessages(history.slice(0, n)))
    }
  })

  test('a real result appended later replaces the synthetic one', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['bash'])
    const history: HistoryEvent[] = [h.user('go'), ask]
    const view = new ProviderView()
    expect(view.update(history)[2]).toMatchObject({ status: 'error', outputText: MISSING_RESULT_TEXT })
    const real = h.result(callIds(ask)[0]!, 'bash', 'done')
    history.push(real)
    expect(view.update(history)).toEqual([history[0], ask, real])
  })

  test('per-turn work stays flat as the history grows', () => {
    const h = new HistoryBuilder()
    const history: HistoryEvent[] = [h.system('prompt')]
    const view = new ProviderView()
    view.update(history)
    const perTurn: number[] = []
    for (let turn = 0; turn < 300; turn++) {
      const ask = h.calls(['read_file', 'grep'])
      const [a, b] = callIds(ask) as [string, string]
      history.push(
        h.user(`turn ${turn}`),
        ask,
        h.result(a, 'read_file', 'x'),
        h.result(b, 'grep', 'y'),
        h.assistant('ok'),
      )
      const before = view.convertedCount
      view.update(history)
      perTurn.push(view.convertedCount - before)
    }
    expect(new Set(perTurn)).toEqual(new Set([5]))
    expect(view.convertedCount).toBe(history.length)
  })

  test('a history that is not the previous one grown is converted from scratch', () => {
    const view = new ProviderView()
    const first = shortConversation(new HistoryBuilder(1))
    view.update(first)
    const other = new HistoryBuilder(5)
    const replaced = [other.user('different'), other.assistant('history')]
    replaced[0]!.id = 'x1'
    replaced[1]!.id = 'x2'
    expect(view.update(replaced)).toEqual(replaced)
    expect(view.update(first.slice(0, 2))).toEqual(toProviderMessages(first.slice(0, 2)))
  })
})

describe('formatting', () => {
  /** Sends each message with its id tagged, and counts the calls per message id. */
  function tagging() {
    const calls = new Map<string, number>()
    const format = (message: Message): Message => {
      calls.set(message.id, (calls.get(message.id) ?? 0) + 1)
      return { ...message, id: `${message.id}*` }
    }
    return { calls, format }
  }

  test('each message is sent as format returns it, the rules applied first', () => {
    const h = new HistoryBuilder()
    const system = h.system('prompt')
    const go = h.user('go')
    const ask = h.calls(['a', 'b'])
    const [a] = callIds(ask) as [string, string]
    const { format } = tagging()
    const view = new ProviderView({ format }).update([
      system,
      go,
      ask,
      h.result(a, 'a', 'ok'),
      h.user('next'),
    ])
    expect(ids(view)).toEqual(['m1*', 'm2*', 'm3*', 'm4*', `${callIds(ask)[1]}:missing-result*`, 'm5*'])
  })

  test('a message can be sent as several messages or as none', () => {
    const h = new HistoryBuilder()
    const history = [h.user('one'), h.user('two'), h.assistant('three')]
    const format = (message: Message): Message | Message[] => {
      if (message.id === 'm1') return []
      if (message.id === 'm2') return [message, { ...message, id: 'm2-copy' }]
      return message
    }
    expect(ids(new ProviderView({ format }).update(history))).toEqual(['m2', 'm2-copy', 'm3'])
  })

  test('every message is formatted once, however many updates see it', () => {
    const { history } = generateSession({ seed: 11, tasks: 40, sessionId: 'fmt' })
    const { calls, format } = tagging()
    const view = new ProviderView({ format })
    for (let n = 0; n <= history.length; n++) view.update(history.slice(0, n))
    expect(calls.size).toBeGreaterThan(100)
    expect([...calls.values()].every((count) => count === 1)).toBe(true)
  })

  test('a placeholder is formatted once while its call waits, and gives way to the real result', () => {
    const h = new HistoryBuilder()
    const go = h.user('go')
    const ask = h.calls(['bash'])
    const history: HistoryEvent[] = [go, ask]
    const { calls, format } = tagging()
    const view = new ProviderView({ format })
    const placeholder = `${callIds(ask)[0]}:missing-result`
    expect(ids(view.update(history)).at(-1)).toBe(`${placeholder}*`)
    expect(ids(view.update(history)).at(-1)).toBe(`${placeholder}*`)
    expect(calls.get(placeholder)).toBe(1)
    const real = h.result(callIds(ask)[0]!, 'bash', 'done')
    history.push(real)
    expect(ids(view.update(history))).toEqual(['m1*', 'm2*', 'm3*'])
  })
})
