import type { Message } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { HistoryStates } from '../../src/apis/shared/history-states.js'
import { user } from '../messages.js'

describe('HistoryStates', () => {
  test('one state per history, found by its first message, the least recently used evicted past 8', () => {
    let made = 0
    const states = new HistoryStates(() => ({ n: ++made }))
    const histories: Message[][] = Array.from({ length: 9 }, (_, i) => [user(`task ${i}`)])
    const first = states.of(histories[0]!)
    // The same history, grown: the same state.
    expect(states.of([...histories[0]!, user('more')])).toBe(first)
    for (const history of histories.slice(1, 8)) states.of(history)
    expect(made).toBe(8)
    // Used again, so the second history is now the least recently used: the ninth evicts it.
    expect(states.of(histories[0]!)).toBe(first)
    states.of(histories[8]!)
    expect(made).toBe(9)
    expect(states.of(histories[0]!)).toBe(first)
    expect(states.of(histories[1]!).n).toBe(10)
    // A copy of a history is another history (its first message is another object).
    expect(states.of([{ ...histories[0]![0]! }])).not.toBe(first)
  })

  test('requests with no messages share one state', () => {
    const states = new HistoryStates(() => ({}))
    expect(states.of([])).toBe(states.of([]))
  })
})
