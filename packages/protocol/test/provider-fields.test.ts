import { CodecError, decodeHistoryEvent, encodeHistoryEvent, type HistoryEvent } from '@kode/protocol'
import { expect, test } from 'vitest'

// Anthropic programmatic tool calling: a call's `caller` and the response's `container` are kept
// in `providerFields`, an optional field, so a line holding them keeps the oldest format version.
const message: HistoryEvent = {
  role: 'assistant',
  id: 'a1',
  createdAt: 1,
  parts: [
    {
      type: 'tool_call',
      id: 'toolu_1',
      name: 'get_weather',
      argumentsJson: '{"city":"Mainz"}',
      providerFields: {
        format: 'anthropic',
        fields: { caller: { type: 'code_execution_20250825', tool_id: 'srvtoolu_1' } },
      },
    },
  ],
  stopReason: 'tool_use',
  providerFields: { format: 'anthropic', fields: { container: { id: 'container_1', expires_at: 'x' } } },
}

test('providerFields on a call and a message round-trip, at format version 1', () => {
  const line = encodeHistoryEvent(message)
  expect(line.startsWith('{"v":1,')).toBe(true)
  expect(decodeHistoryEvent(line)).toEqual(message)
})

test('providerFields without a format is refused with its path', () => {
  const broken = { ...message, providerFields: { fields: {} } } as unknown as HistoryEvent
  const error = (() => {
    try {
      encodeHistoryEvent(broken)
    } catch (e) {
      return e
    }
  })()
  expect(error).toBeInstanceOf(CodecError)
  expect((error as CodecError).path).toBe('/providerFields/format')
})
