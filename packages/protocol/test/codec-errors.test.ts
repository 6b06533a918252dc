import {
  CodecError,
  decodeEvent,
  decodeHistoryEvent,
  type Event,
  encodeEvent,
  encodeHistoryEvent,
  type HistoryEvent,
  validateEvent,
  validateHistoryEvent,
} from '@kode/protocol'
import { describe, expect, test } from 'vitest'

function codecErrorOf(fn: () => unknown): CodecError {
  try {
    fn()
  } catch (error) {
    expect(CodecError.is(error)).toBe(true)
    expect(error).toBeInstanceOf(CodecError)
    return error as CodecError
  }
  throw new Error('expected a CodecError, nothing was thrown')
}

const line = (record: Record<string, unknown>) => JSON.stringify({ v: 1, ...record })
const user = { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'hi' }] }

describe('decodeHistoryEvent rejects bad input with the JSON path', () => {
  test('invalid JSON', () => {
    const error = codecErrorOf(() => decodeHistoryEvent('{"v":1,"role":'))
    expect(error.path).toBe('')
    expect(error.message).toMatch(/^at the top level: expected a JSON object \(.*JSON/)
    expect(error.cause).toBeInstanceOf(SyntaxError)
  })

  test('a line whose reading throws a value that is not an Error: a CodecError whose cause is that value', () => {
    // A JavaScript caller may pass anything; JSON.parse turns it into text first, which may throw.
    const line = {
      toString() {
        throw null
      },
    } as unknown as string
    for (const decode of [decodeHistoryEvent, decodeEvent]) {
      const error = codecErrorOf(() => decode(line))
      expect(error.path).toBe('')
      expect(error.cause).toBeNull()
    }
  })

  test('a line that starts with a byte order mark says so, since the mark does not show', () => {
    // An editor may save a history file with one; JSON.parse's message shows an invisible character.
    const error = codecErrorOf(() => decodeHistoryEvent(`\uFEFF${line(user)}`))
    expect(error.path).toBe('')
    expect(error.message).toBe(
      'at the top level: expected a JSON object (the line starts with a byte order mark, U+FEFF, which Kode never writes: remove it)',
    )
  })

  test('an event line that starts with a byte order mark says so too', () => {
    const event = JSON.stringify({ type: 'interrupt', sessionId: 's', timestamp: 1 })
    expect(codecErrorOf(() => decodeEvent(`\uFEFF${event}`)).message).toBe(
      'at the top level: expected a JSON object (the line starts with a byte order mark, U+FEFF, which Kode never writes: remove it)',
    )
  })

  test('a JSON value that is not an object', () => {
    expect(codecErrorOf(() => decodeHistoryEvent('[1,2]')).message).toBe(
      'at the top level: expected a JSON object (got an array)',
    )
    expect(codecErrorOf(() => decodeHistoryEvent('null')).path).toBe('')
  })

  test('a huge value is quoted by its start, so the message stays short', () => {
    // A corrupt line can hold anything where a tag or the version belongs; its error is printed.
    const big = 'x'.repeat(100_000)
    const lines = [
      line({ type: big, id: 'a', createdAt: 1 }),
      line({ role: big, id: 'a', createdAt: 1 }),
      line({ ...user, parts: [{ type: big }] }),
      JSON.stringify({ v: big }),
      JSON.stringify({ v: [big, big] }),
    ]
    for (const bad of lines) {
      const { message } = codecErrorOf(() => decodeHistoryEvent(bad))
      expect(message.length).toBeLessThan(300)
      expect(message).toMatch(/"xxxxxxxxxx+…/)
    }
    // An event's error lists every event type: some 600 characters before the value.
    const event = JSON.stringify({ type: big, sessionId: 's', timestamp: 1 })
    expect(codecErrorOf(() => decodeEvent(event)).message.length).toBeLessThan(800)
  })

  test('a missing format version', () => {
    const error = codecErrorOf(() => decodeHistoryEvent(JSON.stringify(user)))
    expect(error.path).toBe('/v')
    expect(error.message).toBe('at /v: expected a format version (a positive integer) (missing)')
  })

  test('a version JSON reads as infinite is named as the number it is, not as null', () => {
    const error = codecErrorOf(() => decodeHistoryEvent(`{"v":1e400,${JSON.stringify(user).slice(1)}`))
    expect(error.message).toBe('at /v: expected a format version (a positive integer) (got Infinity)')
  })

  test('a version newer than this release', () => {
    const error = codecErrorOf(() => decodeHistoryEvent(JSON.stringify({ v: 99, ...user })))
    expect(error.path).toBe('/v')
    expect(error.message).toContain('written by a newer Kode')
  })

  test('an unknown record type', () => {
    const error = codecErrorOf(() => decodeHistoryEvent(line({ type: 'checkpoint', id: 'x', createdAt: 1 })))
    expect(error.path).toBe('/type')
    expect(error.message).toBe(
      'at /type: expected type to be one of "error" | "task_metadata" | "interrupt" | "compaction" | "approval_request" | "approval_decision" | "tool_progress" (got "checkpoint")',
    )
  })

  test('an unknown role', () => {
    const error = codecErrorOf(() => decodeHistoryEvent(line({ ...user, role: 'narrator' })))
    expect(error.path).toBe('/role')
    expect(error.expected).toBe('role to be one of "system" | "developer" | "user" | "assistant" | "tool"')
  })

  test('a record with a stray role is refused, whatever the role, rather than read as a message', () => {
    const interrupt = { type: 'interrupt', id: 'x', createdAt: 1 }
    for (const stray of [{ role: 'user', parts: [] }, { role: 'narrator' }]) {
      const value = { ...interrupt, ...stray }
      for (const error of [
        codecErrorOf(() => decodeHistoryEvent(line(value))),
        codecErrorOf(() => validateHistoryEvent(value)),
        codecErrorOf(() => encodeHistoryEvent(value as never)),
      ]) {
        expect(error.path).toBe('/role')
        expect(error.message).toBe(
          'at /role: expected no "role" on a record of type "interrupt" (with both, it could be a message or a record)',
        )
      }
    }
  })

  test('a message whose stray type names no record is a message, as it always was', () => {
    expect(decodeHistoryEvent(line({ ...user, type: 'message' }))).toEqual({ ...user, type: 'message' })
  })

  test('neither role nor type', () => {
    expect(codecErrorOf(() => decodeHistoryEvent(line({ id: 'x', createdAt: 1 }))).expected).toBe(
      'a message (with "role") or a history record (with "type")',
    )
  })

  test('a field of the wrong type', () => {
    const error = codecErrorOf(() => decodeHistoryEvent(line({ ...user, createdAt: '2026-01-01' })))
    expect(error.path).toBe('/createdAt')
    expect(error.message).toBe('at /createdAt: expected a finite number (got "2026-01-01")')
  })

  test('an empty id; any other string is a valid id, UUID or not (imported histories keep theirs)', () => {
    expect(codecErrorOf(() => decodeHistoryEvent(line({ ...user, id: '' }))).path).toBe('/id')
    for (const id of ['u1', 'msg_01XYZ', '0b5d3a2e-6f1c-4c4e-9d1a-1f0e7d1e0001']) {
      expect(decodeHistoryEvent(line({ ...user, id })).id).toBe(id)
    }
  })

  test('a missing required field', () => {
    const { id: _id, ...noId } = user
    const error = codecErrorOf(() => decodeHistoryEvent(line(noId)))
    expect(error.path).toBe('/id')
    expect(error.message).toContain('(missing)')
  })

  test('a wrong field deep inside a part', () => {
    const assistant = {
      role: 'assistant',
      id: 'a',
      createdAt: 1,
      parts: [
        { type: 'text', text: 'ok' },
        { type: 'tool_call', id: 'c1', name: 'read', argumentsJson: { path: 'x' } },
      ],
    }
    const error = codecErrorOf(() => decodeHistoryEvent(line(assistant)))
    expect(error.path).toBe('/parts/1/argumentsJson')
    expect(error.expected).toBe('a string')
  })

  test('an unknown part type names the allowed ones', () => {
    const error = codecErrorOf(() =>
      decodeHistoryEvent(line({ ...user, parts: [{ type: 'audio', data: 'x' }] })),
    )
    expect(error.path).toBe('/parts/0')
    expect(error.message).toBe(
      'at /parts/0: expected type to be one of "text" | "image_url" | "image_file" (got type "audio")',
    )
  })

  test('a text part inside a tool result is rejected: tool text lives in outputText', () => {
    const tool = {
      role: 'tool',
      id: 't',
      createdAt: 1,
      toolCallId: 'c1',
      toolName: 'read',
      status: 'success',
      outputText: '',
      parts: [{ type: 'text', text: 'file contents' }],
    }
    const error = codecErrorOf(() => decodeHistoryEvent(line(tool)))
    expect(error.path).toBe('/parts/0')
    expect(error.message).toBe(
      'at /parts/0: expected type to be one of "image_url" | "image_file" (got type "text")',
    )
  })

  test('an enum value out of range', () => {
    const tool = {
      role: 'tool',
      id: 't',
      createdAt: 1,
      toolCallId: 'c1',
      toolName: 'read',
      status: 'timeout',
      outputText: '',
      parts: [],
    }
    const error = codecErrorOf(() => decodeHistoryEvent(line(tool)))
    expect(error.path).toBe('/status')
    expect(error.message).toBe('at /status: expected "success" or "error" or "aborted" (got "timeout")')
  })
})

describe('encodeHistoryEvent', () => {
  test('refuses an invalid event instead of persisting it', () => {
    const bad = { ...user, parts: [{ type: 'text', text: 42 }] } as unknown as HistoryEvent
    expect(codecErrorOf(() => encodeHistoryEvent(bad)).path).toBe('/parts/0/text')
  })

  test('refuses a field named v, which would shadow the version', () => {
    const shadow = { ...user, v: 7 } as unknown as HistoryEvent
    expect(codecErrorOf(() => encodeHistoryEvent(shadow)).path).toBe('/v')
  })

  test('writes the version first and no newline', () => {
    const encoded = encodeHistoryEvent(user as HistoryEvent)
    expect(encoded).toBe(
      '{"v":1,"role":"user","id":"u1","createdAt":1,"parts":[{"type":"text","text":"hi"}]}',
    )
  })
})

describe('unknown extra fields are kept', () => {
  test('on decode, and written back on encode', () => {
    const withExtra = line({ ...user, origin: { app: 'ide', build: 7 } })
    const decoded = decodeHistoryEvent(withExtra) as unknown as Record<string, unknown>
    expect(decoded.origin).toEqual({ app: 'ide', build: 7 })
    expect(encodeHistoryEvent(decoded as unknown as HistoryEvent)).toBe(withExtra)
  })

  test('inside nested parts too', () => {
    const withExtra = line({ ...user, parts: [{ type: 'text', text: 'hi', lang: 'en' }] })
    expect(encodeHistoryEvent(decodeHistoryEvent(withExtra))).toBe(withExtra)
  })
})

describe('protocol events', () => {
  test('validateEvent names the field', () => {
    const error = codecErrorOf(() =>
      validateEvent({ type: 'assistant_text_delta', sessionId: 's', timestamp: 1, content: 5 }),
    )
    expect(error.path).toBe('/content')
  })

  test('an unknown event type is reported on /type', () => {
    expect(codecErrorOf(() => decodeEvent('{"type":"party","sessionId":"s","timestamp":1}')).path).toBe(
      '/type',
    )
  })

  test('encodeEvent writes a valid event as JSON.stringify does', () => {
    const event: Event = { type: 'assistant_text_delta', sessionId: 's', timestamp: 1, content: '😀\u2028' }
    expect(encodeEvent(event)).toBe(JSON.stringify(event))
    expect(decodeEvent(encodeEvent(event))).toStrictEqual(event)
  })

  test('encodeEvent refuses what decodeEvent would refuse, and throws nothing but a CodecError', () => {
    // Each of these once went out as a line no reader takes, or threw a TypeError, or gave undefined.
    const invalid = { type: 'party', sessionId: 's', timestamp: 1 } as unknown as Event
    expect(codecErrorOf(() => encodeEvent(invalid)).path).toBe('/type')
    const delta = { type: 'assistant_text_delta', sessionId: 's', timestamp: 1, content: 'x' } as const
    const bigint = { ...delta, timestamp: 1n } as unknown as Event
    expect(codecErrorOf(() => encodeEvent(bigint)).expected).toBe('a value JSON can represent')
    const cycle: Record<string, unknown> = { ...delta }
    cycle.self = cycle
    codecErrorOf(() => encodeEvent(cycle as unknown as Event))
    codecErrorOf(() => encodeEvent(undefined as unknown as Event))
    // What is checked is what is written: a toJSON cannot slip an invalid value past the check.
    const sly = { ...delta, content: { toJSON: () => 5 } } as unknown as Event
    expect(codecErrorOf(() => encodeEvent(sly)).path).toBe('/content')
    // Infinity would be written as null.
    expect(codecErrorOf(() => encodeEvent({ ...delta, timestamp: Number.POSITIVE_INFINITY })).path).toBe(
      '/timestamp',
    )
  })

  test('end carries the __app__ session', () => {
    expect(decodeEvent('{"type":"end","sessionId":"__app__","timestamp":1}').type).toBe('end')
    expect(codecErrorOf(() => decodeEvent('{"type":"end","sessionId":"s1","timestamp":1}')).path).toBe(
      '/sessionId',
    )
  })
})
