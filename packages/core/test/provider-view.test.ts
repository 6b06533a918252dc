import { ProviderView } from '@kode/core'
import type { HistoryEvent, Message } from '@kode/protocol'
import { MISSING_RESULT_TEXT, toProviderMessages } from '@kode/protocol/helpers'
import { describe, expect, test } from 'vitest'
import { generateSession } from '../../../test/history/generate-session.js'
import { callIds, HistoryBuilder, shortConversation } from '../../../test/history/history.js'

const ids = (messages: Message[]) => messages.map((m) => m.id)

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
