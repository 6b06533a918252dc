import type { HistoryEvent, Message } from '@kode/protocol'
import { MessagePreparer, prepareMessages } from '@kode/providers/adapter'
import { describe, expect, test } from 'vitest'
import { generateSession } from '../../../../test/history/generate-session.js'
import { callIds, HistoryBuilder } from '../../../../test/history/history.js'

/** Image files read as their path's bytes. */
const options = { readImageFile: async (path: string) => new TextEncoder().encode(path) }

/** What the preparer prepares, without the settled part's bookkeeping (`prepareMessages` has none). */
async function prepared(preparer: MessagePreparer, request: Parameters<MessagePreparer['prepare']>[0]) {
  const { settled: _, ...view } = await preparer.prepare(request, options)
  return view
}

const messagesOf = (history: readonly HistoryEvent[]) => history.filter((e): e is Message => 'role' in e)

/** The whole history with a moded user message and developer messages in the places folding cares about. */
function richHistory(): Message[] {
  const { history } = generateSession({ seed: 11, tasks: 40, sessionId: 'prep' })
  const h = new HistoryBuilder(3)
  const ask = h.calls(['read_file', 'grep'])
  const [a, b] = callIds(ask) as [string, string]
  const developer = (text: string): Message => ({ ...h.user(text), role: 'developer' }) as Message
  return [
    ...messagesOf(history),
    { ...h.user('in a mode'), mode: 'koding', modeContext: 'ctx' } as Message,
    developer('after the moded user message'),
    ask,
    developer('held until the results are there'),
    h.result(a, 'read_file', 'x'),
    h.system('a new system prompt'),
    developer('after a system message'),
    h.result(b, 'grep', 'y (an orphan: a system message closed its group)'),
    h.assistant('done'),
    developer('after an assistant message'),
  ]
}

describe('MessagePreparer', () => {
  const history = richHistory()

  test('record by record, it prepares what prepareMessages prepares from the whole history', async () => {
    const preparer = new MessagePreparer()
    const messages: Message[] = []
    for (const message of history) {
      messages.push(message) // one array, grown in place, as a host's loop keeps it
      const request = { system: 'host prompt', messages }
      expect(await prepared(preparer, request)).toEqual(await prepareMessages(request, options))
    }
    expect(history.some((m) => m.role === 'system')).toBe(true)
    expect(history.some((m) => m.role === 'developer')).toBe(true)
  })

  test('the entries before the last user or assistant message are kept, not made again', async () => {
    const preparer = new MessagePreparer()
    const first = await preparer.prepare({ messages: history.slice(0, 60) }, options)
    const second = await preparer.prepare({ messages: history.slice(0, 80) }, options)
    const settled = first.entries.length - 4
    for (let i = 0; i < settled; i++) expect(second.entries[i]).toBe(first.entries[i])
  })

  test('the settled entries are counted, under a token that changes when a history does not continue', async () => {
    const preparer = new MessagePreparer()
    const first = (await preparer.prepare({ messages: history.slice(0, 60) }, options)).settled!
    const second = (await preparer.prepare({ messages: history.slice(0, 80) }, options)).settled!
    expect(second.history).toBe(first.history)
    expect(second.count).toBeGreaterThan(first.count)
    const fresh = await prepareMessages({ messages: history.slice(0, 80) }, options)
    // Every entry up to the count is final: the whole history's entries start with them.
    expect(fresh.entries.slice(0, second.count)).toEqual(
      (await prepared(preparer, { messages: history.slice(0, 80) })).entries.slice(0, second.count),
    )
    expect(fresh.entries.length - second.count).toBeLessThan(8)
    const other = (await preparer.prepare({ messages: history.slice(0, 30) }, options)).settled!
    expect(other.history).not.toBe(first.history)
    expect(fresh.settled).toBeUndefined()
  })

  test('the last eight histories keep their settled parts, found by their first message', async () => {
    const preparer = new MessagePreparer()
    const tokenOf = async (messages: Message[]) => (await preparer.prepare({ messages }, options)).settled!
    const histories = Array.from({ length: 9 }, (_, i) => {
      const h = new HistoryBuilder(100 + i)
      return [h.user(`task ${i}`), h.assistant('done'), h.user('more'), h.assistant('ok')] as Message[]
    })
    const tokens = []
    for (const history of histories.slice(0, 8)) tokens.push(await tokenOf(history))
    const [first, second] = tokens as [(typeof tokens)[0], (typeof tokens)[0]]
    expect(first.count).toBeGreaterThan(0)
    // Used again: still kept, with its settled part, so the second history is now the oldest.
    expect(await tokenOf(histories[0]!)).toEqual(first)
    expect((await tokenOf(histories[0]!)).history).toBe(first.history)
    await tokenOf(histories[8]!)
    // The ninth evicted the least recently used: the second history starts over, the first is kept.
    expect((await tokenOf(histories[1]!)).history).not.toBe(second.history)
    expect((await tokenOf(histories[0]!)).history).toBe(first.history)
    // A copy of a history is another history (its first message is another object).
    expect((await tokenOf(structuredClone(histories[0]!))).history).not.toBe(first.history)
  })

  test('two histories prepared at once each get their own entries', async () => {
    const preparer = new MessagePreparer()
    await preparer.prepare({ messages: history.slice(0, 60) }, options)
    // The first request is still reading its files when the second, of another history, starts.
    const other = structuredClone(history.slice(0, 40))
    const [first, second] = await Promise.all([
      prepared(preparer, { messages: history.slice(0, 70) }),
      prepared(preparer, { messages: other }),
    ])
    expect(first).toEqual(await prepareMessages({ messages: history.slice(0, 70) }, options))
    expect(second).toEqual(await prepareMessages({ messages: other }, options))
  })

  test('a history that does not continue the last one is prepared from scratch', async () => {
    const preparer = new MessagePreparer()
    await preparer.prepare({ messages: history.slice(0, 80) }, options)
    const shorter = history.slice(0, 30)
    expect(await prepared(preparer, { messages: shorter })).toEqual(
      await prepareMessages({ messages: shorter }, options),
    )
    // The same length and ids, one message replaced by another object (a rewritten history).
    const grown = history.slice(0, 80)
    await preparer.prepare({ messages: grown }, options)
    const edited = [...grown]
    const at = edited.findIndex((m, i) => i > 10 && m.role === 'user')
    edited[at] = { ...(edited[at] as Message & { role: 'user' }), parts: [{ type: 'text', text: 'edited' }] }
    expect(await prepared(preparer, { messages: edited })).toEqual(
      await prepareMessages({ messages: edited }, options),
    )
    expect(JSON.stringify(await preparer.prepare({ messages: edited }, options))).toContain('edited')
  })

  test('a compacted history (a summary, then the kept messages) and a forked one are prepared afresh', async () => {
    const preparer = new MessagePreparer()
    const grown = history.slice(0, 90)
    await preparer.prepare({ messages: grown }, options)
    const kept = grown.slice(60)
    const h = new HistoryBuilder(21)
    const compacted = [h.system('prompt'), h.user('Summary of the conversation so far.'), ...kept]
    expect(await prepared(preparer, { messages: compacted })).toEqual(
      await prepareMessages({ messages: compacted }, options),
    )
    // A fork reads the same records back as new objects: equal, never the cached ones.
    const forked = structuredClone(grown)
    const view = await prepared(preparer, { messages: forked })
    expect(view).toEqual(await prepareMessages({ messages: forked }, options))
    expect(view.entries.every((entry) => !grown.includes(entry.message))).toBe(true)
  })

  test('a failed image read settles nothing wrongly: the next request reads the file again', async () => {
    const h = new HistoryBuilder(9)
    const withImage: Message = {
      ...h.user('look'),
      parts: [{ type: 'image_file', path: 'a.png', mimeType: 'image/png' }],
    } as Message
    const messages = [withImage, h.assistant('seen'), h.user('again')]
    const preparer = new MessagePreparer()
    let reads = 0
    const failing = async () => {
      reads++
      throw new Error('disk gone')
    }
    await expect(preparer.prepare({ messages }, { readImageFile: failing })).rejects.toThrow(/a\.png/)
    const view = await preparer.prepare({ messages }, { readImageFile: async () => new Uint8Array([1, 2]) })
    expect([...view.files.values()]).toEqual(['data:image/png;base64,AQI='])
    expect(reads).toBe(1)
  })
})
