import type { Citation } from '@kode/protocol'
import { decodeHistoryEvent, encodeHistoryEvent } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { Accumulator } from '../src/accumulate.js'

const make = () =>
  new Accumulator({
    api: 'x',
    provider: 'x',
    model: 'm',
    prices: undefined,
    startedAt: 100,
    now: () => 150,
    createId: () => 'id-1',
  })
const page = { url: 'https://a.example/', title: 'A' }

describe('Accumulator citations', () => {
  test('go on the open text part, or the last one (of the item given), or a text part of their own', () => {
    const acc = make()
    acc.citations([page]) // no text yet: a part of its own
    acc.text('one', { itemId: 'msg_1' })
    acc.citations([{ url: 'https://b.example/' }]) // open
    acc.endBlock()
    acc.thinking('hmm')
    acc.text('two', { itemId: 'msg_2' })
    acc.endBlock()
    acc.citations([{ title: 'C' }], { itemId: 'msg_1' }) // the last part of msg_1
    acc.citations([{ title: 'D' }]) // the last text part
    acc.citations([{ title: 'E' }], { itemId: 'msg_3' }) // no part of msg_3: one of its own
    expect(acc.finish('complete').parts).toEqual([
      { type: 'text', text: '', citations: [page] },
      {
        type: 'text',
        text: 'one',
        itemId: 'msg_1',
        citations: [{ url: 'https://b.example/' }, { title: 'C' }],
      },
      { type: 'thinking_text', text: 'hmm' },
      { type: 'text', text: 'two', itemId: 'msg_2', citations: [{ title: 'D' }] },
      { type: 'text', text: '', itemId: 'msg_3', citations: [{ title: 'E' }] },
    ])
  })

  test("a broken adapter's values are checked: fields of the wrong type are dropped, the message stays writable", () => {
    const acc = make()
    acc.text('cited')
    const hostile = [
      null,
      7,
      ['x'],
      { url: 5, title: 'kept', citedText: { no: 1 }, providerFields: { format: 'x', fields: [] } },
      { url: 'https://ok.example/', providerFields: { format: 'x', fields: { a: 1 } }, extra: 'dropped' },
      { providerFields: 'nope' },
    ] as unknown as Citation[]
    acc.citations(hostile)
    acc.citations('not a list' as unknown as Citation[])
    const message = acc.finish('complete')
    expect(message.parts).toEqual([
      {
        type: 'text',
        text: 'cited',
        citations: [
          { title: 'kept' },
          { url: 'https://ok.example/', providerFields: { format: 'x', fields: { a: 1 } } },
        ],
      },
    ])
    expect(decodeHistoryEvent(encodeHistoryEvent(message))).toEqual(message)
  })

  test('nothing usable adds no part', () => {
    const acc = make()
    acc.citations([{} as Citation])
    acc.citations([])
    expect(acc.finish('complete').parts).toEqual([])
  })
})
