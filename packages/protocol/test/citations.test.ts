import {
  type AssistantMessage,
  CodecError,
  citationsOf,
  decodeHistoryEvent,
  distinctSources,
  encodeHistoryEvent,
  type TextPart,
  validateHistoryEvent,
} from '@kode/protocol'
import { describe, expect, test } from 'vitest'

const cited: TextPart = {
  type: 'text',
  text: 'Aisle seats are easier to leave.',
  citations: [
    {
      url: 'https://example.com/seats',
      title: 'Seat guide',
      citedText: 'aisle',
      providerFields: {
        format: 'anthropic',
        fields: { type: 'web_search_result_location', encrypted_index: 'EI1', future: { x: 1 } },
      },
    },
    { title: 'notes.pdf' },
  ],
}

const message = (parts: AssistantMessage['parts']): AssistantMessage => ({
  role: 'assistant',
  id: 'a1',
  createdAt: 1,
  parts,
})

describe('citations on text parts', () => {
  test('are written and read back unchanged, and need no newer format version', () => {
    const event = message([cited, { type: 'text', text: 'More.' }])
    const line = encodeHistoryEvent(event)
    // An optional field: older readers keep fields they do not know, so the line stays version 1.
    expect(line.startsWith('{"v":1,')).toBe(true)
    expect(decodeHistoryEvent(line)).toEqual(event)
    expect(validateHistoryEvent(event)).toEqual(event)
  })

  test('a citation of the wrong shape is refused with its path', () => {
    const line = encodeHistoryEvent(message([cited])).replace('"url":"https://example.com/seats"', '"url":7')
    expect(() => decodeHistoryEvent(line)).toThrow(CodecError)
    expect(() => decodeHistoryEvent(line)).toThrow(/parts\/0\/citations\/0\/url/)
  })

  test('citationsOf lists every text part citations in order, or undefined', () => {
    const second: TextPart = { type: 'text', text: 'b', citations: [{ url: 'https://b.example/' }] }
    expect(citationsOf([cited, { type: 'thinking_text', text: 't' }, second])).toEqual([
      ...(cited.citations ?? []),
      ...(second.citations ?? []),
    ])
    expect(citationsOf([{ type: 'text', text: 'plain' }])).toBeUndefined()
  })

  test('distinctSources keeps the first citation of each url and title, in order', () => {
    const a1 = { url: 'https://a.example/', title: 'A', citedText: 'one' }
    const a2 = { url: 'https://a.example/', title: 'A', citedText: 'two' }
    const aOther = { url: 'https://a.example/', title: 'A, another page title' }
    const bare = { citedText: 'no source named' }
    expect(distinctSources([a1, bare, a2, aOther, { ...bare }])).toEqual([a1, bare, aOther])
    expect(distinctSources([])).toEqual([])
  })
})
