import { decodeHistoryEvent, encodeHistoryEvent, type Message, validateHistoryEvent } from '@kode/protocol'
import {
  INCOMPLETE_CALL_TEXT,
  MISSING_RESULT_TEXT,
  modeBlock,
  toProviderMessages,
} from '@kode/protocol/helpers'
import { describe, expect, test } from 'vitest'
import { callIds, HistoryBuilder, shortConversation } from '../../../test/history/history.js'

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

describe('user message modes in provider input', () => {
  const moded = {
    role: 'user' as const,
    id: 'u1',
    createdAt: 1,
    parts: [{ type: 'text' as const, text: 'Delete the build folder' }],
    mode: 'koding',
    modeContext: 'Add notes to KODING.md',
  }

  test('the mode and its context are sent as a tagged text block before the text, without the mode fields', () => {
    const [sent] = toProviderMessages([moded])
    expect(sent).toEqual({
      role: 'user',
      id: 'u1',
      createdAt: 1,
      parts: [
        { type: 'text', text: '<user-mode name="koding">\nAdd notes to KODING.md\n</user-mode>' },
        { type: 'text', text: 'Delete the build folder' },
      ],
    })
    // The rule applied to its own output changes nothing.
    expect(toProviderMessages([sent!])).toEqual([sent])
    expect(moded.parts).toHaveLength(1)
  })

  test('a mode without context is an empty tag; the name is escaped as an attribute', () => {
    expect(modeBlock('plan')).toBe('<user-mode name="plan" />')
    expect(modeBlock('a"<b&', '')).toBe('<user-mode name="a&quot;&lt;b&amp;" />')
  })

  test('a user message with a mode is stamped with the oldest format version (optional fields keep it)', () => {
    const line = encodeHistoryEvent(moded)
    expect(line.startsWith('{"v":1,')).toBe(true)
    expect(decodeHistoryEvent(line)).toEqual(moded)
  })
})
