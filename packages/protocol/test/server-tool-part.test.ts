import {
  type AssistantMessage,
  decodeHistoryEvent,
  encodeHistoryEvent,
  HISTORY_FORMAT_VERSION,
} from '@kode/protocol'
import { describe, expect, test } from 'vitest'

const search = {
  type: 'server_tool',
  format: 'anthropic',
  block: {
    type: 'server_tool_use',
    id: 'srvtoolu_01',
    name: 'web_search',
    input: { query: 'kode' },
    caller: { type: 'direct' },
  },
} as const
const message = (parts: AssistantMessage['parts']): AssistantMessage => ({
  role: 'assistant',
  id: 'a1',
  createdAt: 1,
  parts,
})

describe('server_tool parts in the history format', () => {
  test('a message with one is written as version 2 and read back unchanged, extra block fields kept', () => {
    const event = message([{ type: 'text', text: 'Searching.' }, search])
    const line = encodeHistoryEvent(event)
    expect(line.startsWith('{"v":2,')).toBe(true)
    expect(decodeHistoryEvent(line)).toEqual(event)
    expect(HISTORY_FORMAT_VERSION).toBeGreaterThanOrEqual(2)
  })

  test('a line that needs nothing new is still written as version 1, for older readers', () => {
    expect(encodeHistoryEvent(message([{ type: 'text', text: 'hi' }])).startsWith('{"v":1,')).toBe(true)
  })

  test('a block without a type is refused with its path', () => {
    const line = encodeHistoryEvent(message([search])).replace('"type":"server_tool_use",', '')
    expect(() => decodeHistoryEvent(line)).toThrow(/parts\/0/)
  })
})
