import type { HistoryEvent, Message } from '@kode/protocol'
import {
  JsonTextCache,
  lastTurnStart,
  MessagePreparer,
  prepareMessages,
  SettledItems,
  type TurnConverters,
  userAssistantTurns,
  type ViewEntry,
} from '@kode/providers/adapter'
import { describe, expect, test } from 'vitest'
import { generateSession } from '../../../../test/history/generate-session.js'
import { assistant, call, developer, result, user } from '../messages.js'

/** Image files read as their path's bytes. */
const options = { readImageFile: async (path: string) => new TextEncoder().encode(path) }

const messagesOf = (history: readonly HistoryEvent[]) => history.filter((e): e is Message => 'role' in e)

/** A wire item per entry: the entry's role and message id. */
const itemOf = (entry: ViewEntry) => ({ role: entry.role, id: entry.message.id })

/** Turns of message ids; an assistant message without text makes no part, as on a real wire. */
const converters: TurnConverters<string> = {
  user: (m) => [m.id],
  tool: (m) => [m.id],
  assistant: (m) => (m.parts.some((p) => p.type === 'text' && p.text === '') ? [] : [m.id]),
}
const turnsOf = (entries: readonly ViewEntry[]) => userAssistantTurns({ entries }, converters)

describe('SettledItems', () => {
  const history = messagesOf(generateSession({ seed: 5, tasks: 30, sessionId: 'settled' }).history)

  test('request by request: the items of all the entries, each settled entry made once', async () => {
    const preparer = new MessagePreparer()
    const kept = new SettledItems<{ role: string; id: string }>()
    let made = 0
    const make = (entries: readonly ViewEntry[]) => {
      made += entries.length
      return entries.map(itemOf)
    }
    const messages: Message[] = []
    for (const message of history) {
      messages.push(message)
      const view = await preparer.prepare({ messages }, options)
      const items = kept.items(view, make)
      const whole = (await prepareMessages({ messages }, options)).entries.map(itemOf)
      expect([...items.settled, ...items.rest]).toEqual(whole)
      expect(items.settled.length).toBe(view.settled!.count)
    }
    // Made again each request: the unsettled rest only (a few entries), never the whole history.
    expect(made).toBeLessThan(history.length * 4)
    expect(history.length).toBeGreaterThan(100)
  })

  test('the settled JSON is written once and goes in the list as it is', async () => {
    const preparer = new MessagePreparer()
    const kept = new SettledItems<{ role: string; id: string }>()
    const json = new JsonTextCache()
    const first = kept.items(await preparer.prepare({ messages: history.slice(0, 50) }, options), (e) =>
      e.map(itemOf),
    )
    const list = [{ system: true }, ...first.settled, ...first.rest]
    const known = first.known(json, 0, 1)
    expect(json.list(list, 0, known).text).toBe(JSON.stringify(list))
    expect(known.json).toBe(JSON.stringify(first.settled).slice(1, -1))
    // Not where it says (a body put something before the run): written item by item, still right.
    const shifted = [{ other: 1 }, ...list]
    expect(json.list(shifted, 0, known).text).toBe(JSON.stringify(shifted))
    // A later request of the same history adds to the text; one of another history starts over.
    const later = kept.items(await preparer.prepare({ messages: history.slice(0, 80) }, options), (e) =>
      e.map(itemOf),
    )
    expect(later.known(json, 0, 0).json.startsWith(known.json)).toBe(true)
    const other = structuredClone(history.slice(0, 20))
    const fresh = kept.items(await preparer.prepare({ messages: other }, options), (e) => e.map(itemOf))
    const otherItems = (await prepareMessages({ messages: other }, options)).entries.map(itemOf)
    expect([...fresh.settled, ...fresh.rest]).toEqual(otherItems)
    expect(fresh.settled).not.toContain(later.settled[0])
    // The older request's items still give their own JSON after the state moved on.
    expect(later.known(json, 0, 0).json).toBe(JSON.stringify(later.settled).slice(1, -1))
  })

  test('turns: the last settled turn stays open, so a merge across the boundary is made whole', async () => {
    const messages: Message[] = [
      user('u1'),
      assistant([call('c1', 'lookup')]),
      result('c1', 'r1'),
      developer('d1'),
      assistant([{ type: 'text', text: '' }]),
      user('u2'),
      assistant([{ type: 'text', text: 'a2' }]),
      assistant([{ type: 'text', text: 'a3' }]),
      user('u3'),
    ]
    const preparer = new MessagePreparer()
    const kept = new SettledItems<ReturnType<typeof turnsOf>[number]>()
    for (let end = 1; end <= messages.length; end++) {
      const request = { messages: messages.slice(0, end) }
      const items = kept.items(await preparer.prepare(request, options), turnsOf, (entries, at) =>
        lastTurnStart(entries, at, converters),
      )
      expect([...items.settled, ...items.rest]).toEqual(
        turnsOf((await prepareMessages(request, options)).entries),
      )
    }
  })
})

describe('lastTurnStart', () => {
  const entries = (messages: Message[]) =>
    messages.map((message): ViewEntry => {
      if (message.role === 'assistant') return { role: 'assistant', message }
      if (message.role === 'tool') return { role: 'tool', message, appended: [] }
      return { role: 'user', message: message as never, appended: [] }
    })

  test('the first entry of the last turn, across entries that make nothing', () => {
    const run = entries([
      user('u1'),
      assistant([{ type: 'text', text: 'a1' }]),
      result('c1', 'r1'),
      assistant([{ type: 'text', text: '' }]),
      user('u2'),
    ])
    // u2, the empty reply and r1 make one user turn: it starts at r1.
    expect(lastTurnStart(run, 5, converters)).toBe(2)
    expect(lastTurnStart(run, 2, converters)).toBe(1)
    expect(lastTurnStart(run, 1, converters)).toBe(0)
    expect(lastTurnStart(run, 0, converters)).toBe(0)
  })
})
