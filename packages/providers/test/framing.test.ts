import { frameChat, frameFor, frameGoogle, frameTyped, sseComment, sseFrame } from '@kode/providers/testing'
import { expect, test } from 'vitest'

test('chat framing ends with [DONE]', () => {
  expect(frameChat(['{"a":1}'])).toEqual(['data: {"a":1}\n\n', 'data: [DONE]\n\n'])
})

test('typed framing names each event after its payload type', () => {
  expect(frameTyped(['{"type":"ping"}'])).toEqual(['event: ping\ndata: {"type":"ping"}\n\n'])
  expect(frameFor('anthropic', ['{"type":"ping"}'])).toEqual(frameTyped(['{"type":"ping"}']))
})

test('google framing uses CRLF', () => {
  expect(frameGoogle(['{}'])).toEqual(['data: {}\r\n\r\n'])
})

test('multi-line data becomes one data line per line, and comments are colon lines', () => {
  expect(sseFrame('a\nb')).toBe('data: a\ndata: b\n\n')
  expect(sseComment('OPENROUTER PROCESSING')).toBe(': OPENROUTER PROCESSING\n\n')
})
