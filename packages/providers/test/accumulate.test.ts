import type { StreamItem } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { Accumulator } from '../src/accumulate.js'

let ids = 0
const make = (prices?: { input: number; output: number }) =>
  new Accumulator({
    api: 'x',
    provider: 'x',
    model: 'm',
    prices,
    startedAt: 100,
    now: () => 150,
    createId: () => `id-${++ids}`,
  })
const drain = (acc: Accumulator) => {
  const items: StreamItem[] = []
  for (let item = acc.take(); item; item = acc.take()) items.push(item)
  return items
}

describe('Accumulator', () => {
  test('consecutive deltas of one kind extend one part; endBlock starts a new one', () => {
    const acc = make()
    acc.text('a')
    acc.text('b')
    acc.endBlock()
    acc.text('c')
    expect(acc.finish('complete').parts).toEqual([
      { type: 'text', text: 'ab' },
      { type: 'text', text: 'c' },
    ])
  })

  test('an item handed out is no longer held by the queue', () => {
    const acc = make()
    acc.text('a')
    acc.text('b')
    const first = acc.take()
    // White-box on purpose: what matters is what the queue still references.
    const queue = acc.items.slots
    expect(first).toMatchObject({ type: 'text_delta', text: 'a' })
    expect(queue).not.toContain(first)
    drain(acc)
    expect(queue.filter((item) => item !== undefined)).toEqual([])
  })

  test('empty deltas produce neither items nor parts', () => {
    const acc = make()
    acc.text('')
    acc.thinking('')
    expect(drain(acc)).toEqual([])
    expect(acc.finish('complete').parts).toEqual([])
  })

  test('signature deltas join one part; a redacted block stands alone', () => {
    const acc = make()
    acc.signature('data', { format: 'anthropic', redacted: true })
    acc.signature('s1', { format: 'anthropic' })
    acc.signature('s2', { format: 'anthropic' })
    expect(acc.finish('complete').parts).toEqual([
      { type: 'thinking_signature', signature: 'data', format: 'anthropic', model: 'm', redacted: true },
      { type: 'thinking_signature', signature: 's1s2', format: 'anthropic', model: 'm' },
    ])
  })

  test('text of one provider item extends one part that keeps its id and phase; another item starts a new part', () => {
    const acc = make()
    acc.text('a', { itemId: 'msg_1', phase: 'commentary' })
    acc.text('b', { itemId: 'msg_1', phase: 'commentary' })
    acc.text('c', { itemId: 'msg_2', phase: 'final_answer' })
    acc.text('d')
    expect(acc.finish('complete').parts).toEqual([
      { type: 'text', text: 'ab', itemId: 'msg_1', phase: 'commentary' },
      { type: 'text', text: 'c', itemId: 'msg_2', phase: 'final_answer' },
      { type: 'text', text: 'd' },
    ])
  })

  test('signatures of different items stay apart; endBlock makes a whole signature its own part', () => {
    const acc = make()
    acc.signature('enc1', { format: 'openai-responses', itemId: 'rs_1' })
    acc.signature('enc2', { format: 'openai-responses', itemId: 'rs_2' })
    acc.endBlock()
    acc.signature('g1', { format: 'google' })
    acc.endBlock()
    acc.signature('g2', { format: 'google' })
    expect(acc.finish('complete').parts).toEqual([
      {
        type: 'thinking_signature',
        signature: 'enc1',
        format: 'openai-responses',
        model: 'm',
        itemId: 'rs_1',
      },
      {
        type: 'thinking_signature',
        signature: 'enc2',
        format: 'openai-responses',
        model: 'm',
        itemId: 'rs_2',
      },
      { type: 'thinking_signature', signature: 'g1', format: 'google', model: 'm' },
      { type: 'thinking_signature', signature: 'g2', format: 'google', model: 'm' },
    ])
  })

  test('a tool call keeps the provider item id it was started with', () => {
    const acc = make()
    acc.toolCall(0, 'call_1', 'read', 'fc_1')
    acc.toolCall(0, 'call_1', undefined, 'fc_other')
    acc.toolCallArgs(0, '{}')
    expect(acc.finish('complete').parts).toEqual([
      { type: 'tool_call', id: 'call_1', name: 'read', argumentsJson: '{}', itemId: 'fc_1' },
    ])
  })

  test('tool_call_start waits until both id and name are known, and comes once', () => {
    const acc = make()
    acc.toolCall(0, undefined, 'read')
    expect(drain(acc)).toEqual([])
    acc.toolCall(0, 'c1', undefined)
    acc.toolCall(0, 'c1', 'read')
    expect(drain(acc)).toEqual([{ type: 'tool_call_start', toolCallId: 'c1', toolName: 'read' }])
  })

  test('a closed call with no arguments gets {}; in an aborted response unparseable arguments are incomplete', () => {
    const acc = make()
    acc.toolCall(0, 'a', 'x')
    acc.endBlock(0)
    acc.toolCall(1, 'b', 'y')
    acc.toolCallArgs(1, '{"k":')
    acc.endBlock(1)
    acc.toolCall(2, 'c', 'z')
    expect(acc.finish('aborted').parts).toEqual([
      { type: 'tool_call', id: 'a', name: 'x', argumentsJson: '{}' },
      { type: 'tool_call', id: 'b', name: 'y', argumentsJson: '{"k":', incomplete: true },
      { type: 'tool_call', id: 'c', name: 'z', argumentsJson: '', incomplete: true },
    ])
  })

  test('malformed arguments of a call closed in a finished response are kept as written, not incomplete', () => {
    const acc = make()
    acc.toolCall(0, 'a', 'x')
    acc.toolCallArgs(0, '{"path": nope}')
    acc.endBlock(0)
    acc.stop('tool_calls', 'tool_use')
    expect(acc.finish('complete').parts).toEqual([
      { type: 'tool_call', id: 'a', name: 'x', argumentsJson: '{"path": nope}' },
    ])
  })

  test('unparseable arguments are incomplete in a finished response when the call never closed or the response hit length', () => {
    const open = make()
    open.toolCall(0, 'a', 'x')
    open.toolCallArgs(0, '{"k":')
    open.stop('stop', 'stop')
    expect(open.finish('complete').parts).toEqual([
      { type: 'tool_call', id: 'a', name: 'x', argumentsJson: '{"k":', incomplete: true },
    ])
    const length = make()
    length.toolCall(0, 'b', 'y')
    length.toolCallArgs(0, '{"k": "lor')
    length.endBlock(0)
    length.stop('max_tokens', 'length')
    expect(length.finish('complete').parts).toEqual([
      { type: 'tool_call', id: 'b', name: 'y', argumentsJson: '{"k": "lor', incomplete: true },
    ])
  })

  test('aborting drops deltas the caller has not taken and queues the aborted done', () => {
    const acc = make()
    acc.text('seen')
    expect(acc.take()?.type).toBe('text_delta')
    acc.text(' unseen')
    acc.finish('aborted')
    expect(drain(acc).map((i) => i.type)).toEqual(['done'])
  })

  test('usage gets its total; cost comes from prices unless the provider reported one', () => {
    const acc = make({ input: 1, output: 2 })
    acc.usage({ inputTokens: 1_000, outputTokens: 500 })
    expect(acc.finish('complete')).toMatchObject({
      usage: { inputTokens: 1_000, outputTokens: 500, totalTokens: 1_500 },
      costUsd: 0.002,
      createdAt: 100,
      durationMs: 50,
    })
    const reported = make({ input: 1, output: 2 })
    reported.usage({ inputTokens: 1 })
    reported.costUsd(0.5)
    expect(reported.finish('complete').costUsd).toBe(0.5)
  })

  test('a failed response is marked as an API error and queues nothing', () => {
    const acc = make()
    const message = acc.finish('error', 'boom')
    expect(message).toMatchObject({ stopReason: 'error', isApiError: true, errorMessage: 'boom' })
    expect(drain(acc)).toEqual([])
  })

  test('on a wire without a terminal event, a stop reason or the terminal event completes', () => {
    const a = make()
    expect(a.isComplete('stop_reason')).toBe(false)
    a.stop('STOP', 'stop')
    expect(a.isComplete('stop_reason')).toBe(true)
    const b = make()
    b.complete()
    expect(b.isComplete('stop_reason')).toBe(true)
  })

  test('on a wire with a terminal event, only the terminal event completes', () => {
    const a = make()
    a.stop('end_turn', 'stop')
    expect(a.isComplete('terminal_event')).toBe(false)
    a.complete()
    expect(a.isComplete('terminal_event')).toBe(true)
  })
})
